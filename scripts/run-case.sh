#!/usr/bin/env bash
# Runs one test case with a time limit, its output in a file of its own. A case still running at
# the limit has every thread of each of its processes print its stack (tests/support/stack_dump.c,
# preloaded; no debugger needed), symbolized with addr2line, and is then killed: a stuck case
# says where it is stuck and cannot hide the cases after it.
#   scripts/run-case.sh LOG SECONDS COMMAND [ARGS...]
# The exit status is the command's, or 124 at the limit. STACK_DUMP_LIBRARY names the preload
# library (default: the first build/*/tests/libgddt_stack_dump.so of this checkout).
set -u
log=$1 limit=$2
shift 2
dump=${STACK_DUMP_LIBRARY:-$(ls "$(dirname "$0")"/../build/*/tests/libgddt_stack_dump.so 2>/dev/null | head -n 1)}
preload=${LD_PRELOAD:-}
[[ -n $dump ]] && preload="${preload:+$preload:}$(realpath "$dump")"

setsid env LD_PRELOAD="$preload" "$@" >"$log" 2>&1 &
leader=$!
deadline=$((SECONDS + limit))
while kill -0 "$leader" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
if ! kill -0 "$leader" 2>/dev/null; then
  wait "$leader"
  exit $?
fi

echo "=== run-case: still running after ${limit}s: stacks of every thread follow" >>"$log"
trigger=$(($(kill -l RTMIN) + 4))
for pid in $(ps -o pid= --sid "$leader" 2>/dev/null || pgrep -s "$leader"); do
  grep -q stack_dump "/proc/$pid/maps" 2>/dev/null && kill -"$trigger" "$pid" 2>/dev/null
done
sleep 5
kill -TERM -- -"$leader" 2>/dev/null
sleep 2
kill -KILL -- -"$leader" 2>/dev/null
wait "$leader" 2>/dev/null

# Frames inside shared objects and programs print as path(+0xoffset) or path(symbol+0xoffset):
# the former named here.
if command -v addr2line >/dev/null; then
  symbolized=$(mktemp)
  while IFS= read -r line; do
    if [[ $line =~ ^(/[^\(]+|\./[^\(]+)\(\+0x([0-9a-f]+)\) ]]; then
      object=${BASH_REMATCH[1]} offset=$((16#${BASH_REMATCH[2]} - 1))
      where=$(addr2line -f -C -e "$object" "$(printf '0x%x' "$offset")" 2>/dev/null | paste -sd ' ')
      echo "$line  $where"
    else
      echo "$line"
    fi
  done <"$log" >"$symbolized"
  mv "$symbolized" "$log"
fi
exit 124
