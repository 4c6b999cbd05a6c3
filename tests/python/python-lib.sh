# Helpers of the tests that run Python with the scimesh package (source
# after tests/lib/harness.sh).

# python_sanitizer_env: in a sanitizer build (SCIMESH_SANITIZE_FLAGS), the
# variables an uninstrumented python3 needs to load the instrumented
# libscimesh_mpi, one NAME=VALUE a line (nothing otherwise): its runtimes
# preloaded, and leak checking off (the interpreter's own allocations are not
# ours to report).
python_sanitizer_env() {
  [[ ${SCIMESH_SANITIZE_FLAGS:-} == *address* ]] || return 0
  echo "LD_PRELOAD=$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
  echo "ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0"
}

# python_step_env: the `run.env` object of a Python step: PYTHONPATH to this
# build's package (SCIMESH_PYTHONPATH), and python_sanitizer_env's variables.
python_step_env() {
  local line env
  env=$(jq -cn --arg p "${SCIMESH_PYTHONPATH:?}" '{PYTHONPATH: $p}')
  while IFS= read -r line; do
    env=$(jq -c --arg k "${line%%=*}" --arg v "${line#*=}" '. + {($k): $v}' <<<"$env")
  done < <(python_sanitizer_env)
  echo "$env"
}
