"""Loads packaging/spack/package.py against a stand-in of the part of Spack's package API it uses
(no Spack needed) and checks what it declares and the CMake arguments each choice of variants
gives: every variable it defines must be one the project reads, so a renamed option fails here.
  python3 check_spack_recipe.py SOURCE_DIR
"""
import importlib.util
import pathlib
import re
import sys
import types

source = pathlib.Path(sys.argv[1])
sys.dont_write_bytecode = True  # nothing written into the source tree
failures = []


def expect(ok, what):
    if not ok:
        failures.append(what)


# --- the stand-in: directives record what the class declares; define() renders flags as Spack's
# documentation of CMakePackage.define describes them (booleans BOOL ON/OFF, lists ;-joined).
declared = {"variant": {}, "depends_on": [], "conflicts": [], "version": []}


def directive(kind):
    def record(*args, **kwargs):
        if kind == "variant":
            declared["variant"][args[0]] = kwargs.get("default")
        else:
            declared[kind].append((args, kwargs))
    return record


class Spec:
    def __init__(self, variants):
        self.variants = {name: types.SimpleNamespace(value=value) for name, value in variants.items()}
        self.deps = {
            "mpi": types.SimpleNamespace(mpicc="/mpi/bin/mpicc", mpicxx="/mpi/bin/mpicxx", mpifc="/mpi/bin/mpifort"),
            "cuda": types.SimpleNamespace(prefix=types.SimpleNamespace(bin="/cuda/bin")),
        }

    def __getitem__(self, name):
        return self.deps[name]

    def satisfies(self, text):
        sign, name = text[0], text[1:]
        return bool(self.variants[name].value) == (sign == "+")


class CMakePackage:
    def define(self, name, value):
        if isinstance(value, bool):
            return f"-D{name}:BOOL={'ON' if value else 'OFF'}"
        if isinstance(value, (list, tuple)):
            return f"-D{name}:STRING={';'.join(value)}"
        return f"-D{name}:STRING={value}"

    def define_from_variant(self, name, variant):
        return self.define(name, self.spec.variants[variant].value)


class CudaPackage:
    pass


package_module = types.ModuleType("spack.package")
for kind in declared:
    setattr(package_module, kind, directive(kind))
package_module.CMakePackage = CMakePackage
package_module.CudaPackage = CudaPackage
package_module.join_path = lambda *parts: "/".join(parts)
package_module.__all__ = [*declared, "CMakePackage", "CudaPackage", "join_path"]
sys.modules["spack"] = types.ModuleType("spack")
sys.modules["spack.package"] = package_module

recipe_path = source / "packaging" / "spack" / "package.py"
spec_loader = importlib.util.spec_from_file_location("gddt_recipe", recipe_path)
recipe = importlib.util.module_from_spec(spec_loader)
spec_loader.loader.exec_module(recipe)
Gddt = recipe.Gddt

# --- what it declares
for name in ("opencl", "fortran", "tests"):
    expect(name in declared["variant"], f"variant {name} declared")
expect(issubclass(Gddt, CudaPackage), "the cuda and cuda_arch variants come from CudaPackage")
dependencies = {args[0].split("@")[0]: kwargs for args, kwargs in declared["depends_on"]}
expect("mpi" in dependencies and "type" not in dependencies["mpi"], "depends on mpi to build and link")
for tool in ("cmake", "python"):
    expect(dependencies.get(tool, {}).get("type") == "build", f"depends on {tool} to build")
project_version = re.search(r"project\(gddt VERSION (\S+)", (source / "CMakeLists.txt").read_text()).group(1)
expect(any(args[0] == project_version for args, _ in declared["version"]),
       f"declares the project's version {project_version}")


# --- the CMake arguments of two opposite choices
def arguments(**variants):
    package = Gddt.__new__(Gddt)
    package.spec = Spec(variants)
    return package.cmake_args()


everything = arguments(cuda=True, cuda_arch=("90", "80"), opencl=True, fortran=True, tests=True)
nothing = arguments(cuda=False, cuda_arch=("none",), opencl=False, fortran=False, tests=False)
for flag in ("-DGDDT_ENABLE_CUDA:BOOL=ON", "-DGDDT_CUDA_ARCHITECTURES:STRING=90;80",
             "-DCMAKE_CUDA_COMPILER:STRING=/cuda/bin/nvcc", "-DGDDT_ENABLE_FORTRAN:BOOL=ON",
             "-DMPI_Fortran_COMPILER:STRING=/mpi/bin/mpifort", "-DGDDT_BUILD_TESTS:BOOL=ON",
             "-DCMAKE_DISABLE_FIND_PACKAGE_OpenCL:BOOL=OFF", "-DMPI_C_COMPILER:STRING=/mpi/bin/mpicc",
             "-DMPI_CXX_COMPILER:STRING=/mpi/bin/mpicxx", "-DGDDT_BUILD_BENCH:BOOL=OFF"):
    expect(flag in everything, f"+cuda cuda_arch=90,80 +opencl +fortran +tests gives {flag}: {everything}")
for flag in ("-DGDDT_ENABLE_CUDA:BOOL=OFF", "-DGDDT_ENABLE_FORTRAN:BOOL=OFF", "-DGDDT_BUILD_TESTS:BOOL=OFF",
             "-DCMAKE_DISABLE_FIND_PACKAGE_OpenCL:BOOL=ON"):
    expect(flag in nothing, f"~cuda ~opencl ~fortran ~tests gives {flag}: {nothing}")
expect(not any("CUDA_COMPILER" in flag or "ARCHITECTURES" in flag or "Fortran" in flag for flag in nothing),
       f"~cuda ~fortran names no CUDA compiler, architectures or Fortran wrapper: {nothing}")

# --- every GDDT_ variable the recipe sets is read by the project's CMake files
cmake_text = "\n".join(path.read_text() for path in [source / "CMakeLists.txt", *source.glob("cmake/*.cmake")])
for name in sorted({flag[2:].split(":")[0] for flag in everything + nothing}):
    if name.startswith("GDDT_"):
        expect(re.search(rf"\b{name}\b", cmake_text) is not None, f"{name} is read by the project's CMake files")

for failure in failures:
    print(f"FAIL: {failure}")
print(f"spack recipe: {'FAILED' if failures else 'ok'} ({len(failures)} failed checks)")
sys.exit(1 if failures else 0)
