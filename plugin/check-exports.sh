#!/usr/bin/env bash
# Checks that spank_scimesh.so exports only what the SPANK loader looks up
# (slurm_spank_* hooks and the plugin_* / spank_plugin_version data), and all of
# what it needs: no libcurl, spdlog or C++ symbol may leak into slurmstepd.
set -euo pipefail
so=${1:?usage: check-exports.sh spank_scimesh.so}
mapfile -t defined < <(nm -D --defined-only "$so" | awk '{print $3}' | sed 's/@.*//' | sort -u)
(( ${#defined[@]} > 0 )) || { echo "FAIL: nm found no dynamic symbols in $so" >&2; exit 1; }
bad=0
for s in "${defined[@]}"; do
  case $s in
    slurm_spank_*|plugin_name|plugin_type|plugin_version|spank_plugin_version) ;;
    *) echo "FAIL: exported symbol not allowed: $s" >&2; bad=1 ;;
  esac
done
for s in plugin_name plugin_type plugin_version spank_plugin_version slurm_spank_init slurm_spank_exit \
         slurm_spank_init_post_opt slurm_spank_user_init slurm_spank_task_post_fork; do
  [[ " ${defined[*]} " == *" $s "* ]] || { echo "FAIL: required symbol missing: $s" >&2; bad=1; }
done
# The slurm_* functions the plugin calls are weak references: srun and sbatch
# load the plugin too, and a strong one they lack would fail its dlopen.
mapfile -t strong < <(nm -D --undefined-only "$so" | awk '$1 == "U" && $2 ~ /^slurm_/ {print $2}' | sed 's/@.*//')
for s in "${strong[@]}"; do echo "FAIL: slurm function referenced strongly (not weak): $s" >&2; bad=1; done
# libslurm must not be a dependency: the host process provides it.
# (Read whole: `| grep -q` under pipefail can fail on the writer's SIGPIPE.)
if grep -q 'NEEDED.*libslurm' <<<"$(readelf -d "$so")"; then echo "FAIL: links libslurm" >&2; bad=1; fi
(( bad == 0 )) && echo "ok: ${#defined[@]} exported symbols: ${defined[*]}"
exit $bad
