#!/usr/bin/env bash
# Runs the three Himeno versions on a small grid and checks that they print the same residual
# (relative difference below 1e-9: only the sum over the ranks may differ in order).
#   himeno_agree.sh <bench dir> <launcher...>     exits 77 without a GPU
set -u
bench=$1
shift
size=${HIMENO_SIZE:-XS}
iterations=${HIMENO_ITERATIONS:-40}
residuals=()
for version in host stream kernel; do
  output=$("$@" "$bench/gddt-bench-himeno-$version" "$size" "$iterations" 2>&1)
  status=$?
  echo "$output"
  if [ $status -eq 77 ] || grep -q "finding a GPU failed" <<<"$output"; then exit 77; fi
  [ $status -eq 0 ] || { echo "himeno $version failed ($status)"; exit 1; }
  residuals+=("$(sed -n 's/.*gosa \([^ ]*\).*/\1/p' <<<"$output" | head -n 1)")
done
python3 - "${residuals[@]}" <<'PY'
import sys
values = [float(v) for v in sys.argv[1:]]
worst = max(abs(v - values[0]) / max(abs(values[0]), 1e-300) for v in values)
print("himeno residuals", " ".join(sys.argv[1:]), "agree" if worst < 1e-9 else "DISAGREE", f"(max relative difference {worst:.3g})")
sys.exit(0 if worst < 1e-9 else 1)
PY
