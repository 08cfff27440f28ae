#!/usr/bin/env bash
# Installs what building and testing gddt needs on Debian/Ubuntu: C, C++ and Fortran compilers,
# CMake, Ninja, Open MPI, MPICH, GoogleTest, Python, PoCL (an OpenCL platform on the CPU, with
# the ICD loader and headers, for the OpenCL backend's tests), and mpi4py with NumPy for
# examples/fft_transpose.py (Debian's python3-mpi4py is built for Open MPI: the test runs in the
# Open MPI configuration and skips itself under MPICH). Idempotent: installs only missing packages, and
# refreshes the package index only when something is missing. Runs as root (CI) or through
# sudo. CUDA is not installed here: the CUDA backend is built when nvcc is present.
set -euo pipefail

packages=(build-essential gfortran cmake ninja-build pkg-config libopenmpi-dev openmpi-bin
          libmpich-dev mpich libgtest-dev python3 pocl-opencl-icd ocl-icd-opencl-dev opencl-headers
          python3-mpi4py python3-numpy)

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null || true)
  [[ $status == installed ]] || missing+=("$package")
done

if ((${#missing[@]} == 0)); then
  echo "setup-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

as_root=()
if ((EUID != 0)); then
  command -v sudo >/dev/null || { echo "setup-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  as_root=(sudo)
fi

echo "setup-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q </dev/null
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
  "${missing[@]}" </dev/null
echo "setup-deps: done"
