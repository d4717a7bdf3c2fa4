#!/bin/sh
# run.sh — the GPU device check: scripts/gpu-check-run.sh in dlcc's tree, which scripts/gpu-check.sh
# copies into the folder it builds (docs/targets/gpu.md, "Device check").  Needs a POSIX shell, awk,
# grep, sed and the NVIDIA driver (libcuda.so.1); no compiler, no Python, no network.
#
#     ./run.sh [RUNS [WARMUP]]          (defaults 20 and 3)
#
# For each model folder, gpu/harness then cpu/harness: WARMUP untimed calls (the first one, with the
# GPU's set-up, timed apart) and RUNS timed ones, then the outputs compared with the reference
# interpreter's (rtol 1e-3, atol 1e-4).  One line per model:
#     PASS cnn       gpu 0.085 ms (first 310.2 ms)  cpu 0.120 ms  cpu/gpu 1.4
#     FAIL cnn       gpu: check MISMATCH output 0: 10 of 10 elements beyond ...
#     FAIL cnn       gpu: device error (m_run_ptrs returned -2): dlcc-gpu: cuModuleLoadDataEx (the PTX) failed: ...
# Times are medians of one m_run_ptrs call, host memory in and out (the GPU's: copies, launches).
# The harnesses' messages (the GPU's with DLCC_GPU_VERBOSE=1) are kept in LOG (default: a new
# folder under ${TMPDIR:-/tmp}).  A model folder that holds only one side (the folder split to fit
# a transfer) gets a line for that side: "GPU  name ..." or "CPU  name ...".
#
# SANITIZER (e.g. "compute-sanitizer --tool initcheck"): after the timed pass, each GPU harness runs
# once more under it, one line per model: "SAN  name clean" or "SAN  name ERRORS: <its summary>".
# Exit status 0 when every model passed (and the sanitizer found nothing), else 1.
cd "$(dirname "$0")" || exit 2
RUNS=${1:-20}
WARMUP=${2:-3}
[ "$WARMUP" -ge 1 ] 2>/dev/null || WARMUP=1
LOG=${LOG:-$(mktemp -d "${TMPDIR:-/tmp}/dlcc-gpu-check.XXXXXX")}
mkdir -p "$LOG" || exit 2
TIMEOUT=""
command -v timeout >/dev/null 2>&1 && TIMEOUT="timeout 600"

cpu_missing=""
for f in $(cat cpu-flags 2>/dev/null); do
  grep -qw "$f" /proc/cpuinfo || cpu_missing="$cpu_missing $f"
done

# why RC OUT LOGFILE: one line saying why a harness failed
why() {
  case $1 in
    5) printf 'device error (%s): %s' "$(grep -o 'm_run_ptrs returned -*[0-9]*' "$3" | head -n 1)" \
         "$(grep '^dlcc-gpu:' "$3" | tail -n 2 | tr '\n' ' ')" ;;
    7) printf '%s' "$(printf '%s\n' "$2" | grep '^check' | head -n 1)" ;;
    8) printf 'release failed: %s %s' "$(printf '%s\n' "$2" | grep '^release')" \
         "$(grep '^dlcc-gpu:' "$3" | tail -n 1)" ;;
    124) printf 'timed out' ;;
    *) if [ "$1" -gt 128 ]; then printf 'crashed (signal %d)' $(($1 - 128))
       else printf 'exit status %d: %s' "$1" "$(tail -n 1 "$3")"; fi ;;
  esac
}

# median OUT, first OUT: the harness's median time and first run (ms)
median() { printf '%s\n' "$1" | sed -n 's/^time_ms median=\([^ ]*\).*/\1/p' | head -n 1; }
first() { printf '%s\n' "$1" | sed -n 's/^first_ms //p' | head -n 1; }

status=0
for dir in */; do
  m=${dir%/}
  [ -x "$m/gpu/harness" ] || [ -x "$m/cpu/harness" ] || continue
  if [ ! -x "$m/gpu/harness" ]; then   # the CPU side alone
    if [ -n "$cpu_missing" ]; then
      printf 'CPU  %-10s not run, this CPU lacks%s\n' "$m" "$cpu_missing"
      continue
    fi
    cpu=$($TIMEOUT "./$m/cpu/harness" "$RUNS" "$WARMUP" 1e-3 1e-4 "$m" 2>"$LOG/$m.cpu.log")
    crc=$?
    if [ $crc = 0 ]; then
      printf 'CPU  %-10s cpu %s ms (the GPU side in another folder)\n' "$m" "$(printf '%.3f' "$(median "$cpu")")"
    else
      status=1
      printf 'FAIL %-10s cpu: %s\n' "$m" "$(why $crc "$cpu" "$LOG/$m.cpu.log")"
    fi
    continue
  fi
  gpu=$(DLCC_GPU_VERBOSE=1 $TIMEOUT "./$m/gpu/harness" "$RUNS" "$WARMUP" 1e-3 1e-4 "$m" 2>"$LOG/$m.gpu.log")
  grc=$?
  if [ ! -x "$m/cpu/harness" ]; then
    crc=0
    cpu="(the CPU side in another folder)"
  elif [ -n "$cpu_missing" ]; then
    crc=0
    cpu="(cpu: not run, this CPU lacks$cpu_missing)"
  else
    cpu=$($TIMEOUT "./$m/cpu/harness" "$RUNS" "$WARMUP" 1e-3 1e-4 "$m" 2>"$LOG/$m.cpu.log")
    crc=$?
  fi
  gms=$(median "$gpu")
  cms=$(median "$cpu")
  if [ $grc = 0 ] && [ $crc = 0 ]; then
    printf 'PASS %-10s gpu %s ms (first %s ms)  ' "$m" "$(printf '%.3f' "$gms")" "$(printf '%.3f' "$(first "$gpu")")"
    if [ -n "$cms" ]; then
      printf 'cpu %s ms  cpu/gpu %s\n' "$(printf '%.3f' "$cms")" "$(awk "BEGIN { printf \"%.1f\", $cms / $gms }")"
    else
      printf '%s\n' "$cpu"
    fi
  else
    status=1
    [ $grc = 0 ] || printf 'FAIL %-10s gpu: %s\n' "$m" "$(why $grc "$gpu" "$LOG/$m.gpu.log")"
    [ $crc = 0 ] || printf 'FAIL %-10s cpu: %s\n' "$m" "$(why $crc "$cpu" "$LOG/$m.cpu.log")"
  fi
done
if [ -n "${SANITIZER:-}" ]; then
  for dir in */; do
    m=${dir%/}
    [ -x "$m/gpu/harness" ] || continue
    $TIMEOUT $SANITIZER --error-exitcode 99 "./$m/gpu/harness" 1 1 1e-3 1e-4 "$m" >"$LOG/$m.san.log" 2>&1
    src=$?
    if [ $src = 0 ]; then
      printf 'SAN  %-10s clean\n' "$m"
    else
      status=1
      printf 'SAN  %-10s ERRORS (status %d): %s\n' "$m" $src \
        "$(grep -E 'ERROR SUMMARY|^=+ [A-Z]' "$LOG/$m.san.log" | head -n 3 | tr '\n' ' ')"
    fi
  done
fi
echo "logs: $LOG"
exit $status
