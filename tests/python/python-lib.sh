# Helpers of the Python step tests (source after tests/lib/harness.sh).

# python_step_env: the `run.env` object of a Python step: PYTHONPATH to this
# build's package (SCIMESH_PYTHONPATH). In a sanitizer build the library
# Python loads is instrumented: its runtimes are preloaded into the
# interpreter (which is not), and leak checking is off there (the
# interpreter's own allocations are not ours to report).
python_step_env() {
  local env
  env=$(jq -cn --arg p "${SCIMESH_PYTHONPATH:?}" '{PYTHONPATH: $p}')
  if [[ ${SCIMESH_SANITIZE_FLAGS:-} == *address* ]]; then
    local preload
    preload="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
    env=$(jq -c --arg l "$preload" --arg a "${ASAN_OPTIONS:-}:detect_leaks=0" '. + {LD_PRELOAD: $l, ASAN_OPTIONS: $a}' <<<"$env")
  fi
  echo "$env"
}
