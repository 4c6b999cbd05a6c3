#!/usr/bin/env bash
# The packages as an admin meets them, without installing them:
#   - lintian reports no error on any .deb, and every warning it gives is one
#     docs/install.md lists (by tag);
#   - every package carries the DEP-5 copyright file whose licence text is
#     the LICENSE file's, and a changelog.Debian.gz;
#   - the coordinator's systemd unit, as packaged, passes `systemd-analyze
#     verify`, has the hardening docs/coordinator.md promises and an overall
#     exposure of at most 2.0 in `systemd-analyze security` (offline), and its
#     ExecStart line, with systemd's specifiers filled in, starts the packaged
#     coordinator with the packaged settings file.
# (systemd itself cannot run the unit in a container; docs/install.md says so.)
source "$(dirname "$0")/../lib/harness.sh"
harness_init packaging-admin
: "${SCIMESH_SOURCE_DIR:?set by CTest}"
source "$(dirname "$0")/cpack-lib.sh"
SRC=$SCIMESH_SOURCE_DIR
for t in lintian systemd-analyze; do command -v "$t" >/dev/null || fail "$t is not installed: run scripts/install-deps"; done
build_debs

# --- lintian ----------------------------------------------------------------------
lintian --no-cfg "${DEBS[@]}" 2>&1 | grep -v 'running with root privileges' >"$WORK/lintian.txt" || true
if grep -q '^E: ' "$WORK/lintian.txt"; then fail "lintian errors: $(grep '^E: ' "$WORK/lintian.txt")"; fi
grep -q '^W: ' "$WORK/lintian.txt" || note "lintian: no warnings"
for tag in $(sed -n 's/^W: [^:]*: \([a-z0-9-]*\).*/\1/p' "$WORK/lintian.txt" | sort -u); do
  grep -qF "\`$tag\`" "$SRC/docs/install.md" || fail "lintian warns $tag, which docs/install.md does not list"
done
note "lintian: no errors; $(grep -c '^W: ' "$WORK/lintian.txt" || true) warnings, each listed in docs/install.md"

# --- copyright and changelog ---------------------------------------------------------
# The licence stanza of the copyright file, unfolded, is LICENSE after its title.
awk '/^License: MIT$/ {text = ""; next} {text = text $0 "\n"} END {printf "%s", text}' "$SRC/cmake/debian/copyright" |
  sed 's/^ //; s/^\.$//' >"$WORK/licence-in-copyright"  # the last stanza: the licence's own
tail -n +5 "$SRC/LICENSE" >"$WORK/licence-body"
diff -u "$WORK/licence-body" "$WORK/licence-in-copyright" >"$WORK/licence.diff" ||
  fail "the copyright file's licence text is not LICENSE's: $(cat "$WORK/licence.diff")"
for p in "${SCIMESH_PACKAGES[@]}"; do
  dpkg-deb -x "${DEB[$p]}" "$WORK/x-$p"
  cmp -s "$WORK/x-$p/usr/share/doc/$p/copyright" "$SRC/cmake/debian/copyright" || fail "$p lacks its copyright file"
  gzip -t "$WORK/x-$p/usr/share/doc/$p/changelog.Debian.gz" 2>/dev/null || fail "$p lacks changelog.Debian.gz"
done

# --- the coordinator's systemd unit ----------------------------------------------------
ROOT=$WORK/x-scimesh-coordinator
UNIT=/lib/systemd/system/scimesh-coordinator.service
[[ -f $ROOT$UNIT ]] || fail "scimesh-coordinator ships no $UNIT"
# verify resolves the unit's dependencies (sysinit.target, ...) inside --root.
mkdir -p "$ROOT/lib/systemd/system"
cp -an /lib/systemd/system/. "$ROOT/lib/systemd/system/"
systemd-analyze verify --man=no --root="$ROOT" "$UNIT" >"$WORK/verify.txt" 2>&1 ||
  fail "systemd-analyze verify: $(cat "$WORK/verify.txt")"
[[ ! -s $WORK/verify.txt ]] || fail "systemd-analyze verify complained: $(cat "$WORK/verify.txt")"
for setting in DynamicUser=yes ProtectSystem=strict ProtectHome=yes PrivateTmp=yes NoNewPrivileges=yes \
  StateDirectory=scimesh-coordinator 'CapabilityBoundingSet=' 'LoadCredential=keys:/etc/scimesh-coordinator/keys'; do
  grep -qxF "$setting" "$ROOT$UNIT" || fail "the unit lacks $setting"
done
systemd-analyze security --offline=true --root="$ROOT" "$UNIT" >"$WORK/security.txt" 2>&1 ||
  fail "systemd-analyze security failed: $(tail -n 3 "$WORK/security.txt")"
exposure=$(sed -n 's/.*Overall exposure level for scimesh-coordinator.service: \([0-9.]*\).*/\1/p' "$WORK/security.txt")
[[ -n $exposure ]] || fail "no exposure level: $(tail -n 3 "$WORK/security.txt")"
awk -v e="$exposure" 'BEGIN { exit !(e <= 2.0) }' || fail "exposure $exposure is above 2.0: $(grep '✗' "$WORK/security.txt")"
note "unit: verified; exposure $exposure (systemd-analyze security --offline)"

# ExecStart as systemd would run it: %S the state root, %d the credentials.
exec_start=$(sed -n 's/^ExecStart=//p' "$ROOT$UNIT")
mkdir -p "$WORK/state/scimesh-coordinator" "$WORK/credentials"
"$ROOT/usr/bin/scimesh-coordinator" keys add worker --scope worker --workflows '*' --keys "$WORK/credentials/keys" \
  --secret-out "$WORK/worker.token" >/dev/null || fail "keys add failed"
cmdline=${exec_start//%S/$WORK/state}
cmdline=${cmdline//%d/$WORK/credentials}
cmdline=${cmdline//\/usr\/bin\//$ROOT/usr/bin/}
cmdline=${cmdline//\/etc\/scimesh-coordinator\//$ROOT/etc/scimesh-coordinator/}
# The settings file's listen= is the real port; this test takes any free one.
read -ra argv <<<"$cmdline"
SCIMESH_COORDINATOR_LISTEN=127.0.0.1:0 SCIMESH_COORDINATOR_PORT_FILE=$WORK/unit.port \
  "${argv[@]}" >"$WORK/unit-coordinator.log" 2>&1 &
pid=$!
CLEANUP_PIDS+=("$pid")
listening() { [[ -s $WORK/unit.port ]] || { kill -0 "$pid" 2>/dev/null || fail "ExecStart exited: $(cat "$WORK/unit-coordinator.log")"; false; }; }
wait_for "the unit's coordinator to listen" 30 listening
(umask 077; printf 'Authorization: Bearer %s\n' "$(<"$WORK/worker.token")" >"$WORK/worker.header")
code=$(curl -sS -o "$WORK/register.json" -w '%{http_code}' -X POST -H @"$WORK/worker.header" \
  -H 'Content-Type: application/json' "http://127.0.0.1:$(<"$WORK/unit.port")/v1/api/workers/register" \
  -d '{"worker_id":"w","host":"h","version":"t","concurrency":1,
       "definitions":[{"workflow":"unit-test","version":"1","steps":[{"id":"a"}]}]}')
[[ $code == 200 ]] || fail "register with the credential's key answered $code: $(cat "$WORK/register.json")"
[[ -f $WORK/state/scimesh-coordinator/coordinator.db ]] || fail "no database in the state directory"
kill -TERM "$pid"
wait "$pid" || fail "the coordinator did not stop cleanly on SIGTERM"
note "PASS: lintian, copyright, changelog and the coordinator's unit"
