#!/usr/bin/env bash
# System test: `scimesh-launch report` draws a timeline that renders
# (rsvg-convert, librsvg2-bin) at the size it declares, names every step in
# its legend, and draws nothing outside the picture (no clipped label): it is
# rendered again inside a 50 px transparent frame, which must stay empty.
# The events: steps with long names on a 2-node allocation, a step that
# failed and was retried, one abandoned, one unreported, an idle tail.
source "$(dirname "$0")/../lib/harness.sh"
harness_init timeline-render
command -v rsvg-convert >/dev/null || fail "rsvg-convert not found: run scripts/install-deps (librsvg2-bin)"
command -v python3 >/dev/null || fail "python3 not found"

ev=$WORK/events.jsonl
long=mesh-refinement-study-with-a-rather-long-step-name-level-4
{
  echo '{"t":1000,"event":"allocation","worker_id":"w","nodes":[{"name":"node-with-a-long-name-01","cpus":4,"gpus":0},{"name":"n2","cpus":4,"gpus":0}]}'
  # step name, attempt, start, end, outcome, node, cpus
  while read -r step attempt t0 t1 outcome node cpus; do
    lease="l_${step}_$attempt"
    nodes="[{\"name\":\"$node\",\"ranks\":1,\"cpus\":[$cpus],\"gpus\":[]}]"
    echo "{\"t\":$t0,\"event\":\"place\",\"lease_id\":\"$lease\",\"run_id\":\"r\",\"step_id\":\"$step\",\"attempt\":$attempt,\"nodes\":$nodes}"
    echo "{\"t\":$t0,\"event\":\"start\",\"lease_id\":\"$lease\",\"run_id\":\"r\",\"step_id\":\"$step\",\"attempt\":$attempt}"
    echo "{\"t\":$t1,\"event\":\"end\",\"lease_id\":\"$lease\",\"run_id\":\"r\",\"step_id\":\"$step\",\"attempt\":$attempt,\"exit\":\"exit status 0\"}"
    echo "{\"t\":$t1,\"event\":\"outcome\",\"lease_id\":\"$lease\",\"run_id\":\"r\",\"step_id\":\"$step\",\"attempt\":$attempt,\"outcome\":\"$outcome\"}"
  done <<EOF
prepare 1 1000 1004 completed node-with-a-long-name-01 0,1,2,3
solve-a 1 1004 1030 completed node-with-a-long-name-01 0,1
solve-b 1 1004 1012 failed n2 0,1
solve-b 2 1013 1033 completed n2 0,1
$long 1 1005 1020 abandoned n2 2,3
$long 2 1021 1040 completed n2 2,3
report 1 1034 1041 unreported node-with-a-long-name-01 2
EOF
  echo '{"t":1041,"event":"claim","offered":0,"max":4}'
  echo '{"t":1071,"event":"claim","offered":0,"max":4}'
} >"$ev"
"$SCIMESH_LAUNCH_BIN" report "$ev" -o "$WORK/timeline.svg" | tee "$WORK/report.txt"
grep -qx 'steps: 5, attempts: 7 (abandoned 1, completed 4, failed 1, unreported 1)' "$WORK/report.txt" ||
  fail "the summary does not count steps and attempts apart"
grep -q 'busy span: 41.0 s, then idle: 30.0 s' "$WORK/report.txt" || fail "the summary does not split off the idle tail"

rsvg-convert "$WORK/timeline.svg" -o "$WORK/timeline.png" || fail "rsvg-convert cannot render the timeline"
python3 - "$WORK" "$ev" <<'PY' || fail "the rendered timeline is wrong (above)"
import json, re, struct, sys, zlib
import xml.etree.ElementTree as ET

work, events = sys.argv[1], sys.argv[2]
NS = "{http://www.w3.org/2000/svg}"

def png(path):
    """(width, height, rows of RGBA bytes) of an 8-bit RGB/RGBA, non-interlaced PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6), f"PNG depth {depth} colour type {colour}"
            bpp = 4 if colour == 6 else 3
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, rows, prev, stride = zlib.decompress(idat), [], bytearray(w * bpp), w * bpp
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            p = a + b - c
            pred = [0, a, b, (a + b) // 2, a if abs(p - a) <= min(abs(p - b), abs(p - c)) else b if abs(p - b) <= abs(p - c) else c][f]
            line[i] = (line[i] + pred) & 0xFF
        rows.append(line if bpp == 4 else bytearray(b for i in range(0, stride, 3) for b in line[i:i + 3] + b"\xff"))
        prev = line
    return w, h, rows

text = open(f"{work}/timeline.svg").read()
root = ET.fromstring(text)
W, H = int(root.get("width")), int(root.get("height"))
w, h, _ = png(f"{work}/timeline.png")
print(f"timeline.svg declares {W} x {H}; rendered {w} x {h}")
assert (w, h) == (W, H), "the rendered size is not the declared size"
assert W >= 900 and H >= 60 + 8 * 18, "the picture is too small for 8 rows"

steps = {json.loads(l)["step_id"] for l in open(events) if '"step_id"' in l}
legend = next(g for g in root.iter(NS + "g") if g.get("id") == "legend")
labels = ["".join(t.itertext()) for t in legend.iter(NS + "text")]
missing = [s for s in steps if not any(l.startswith(s + " (") for l in labels)]
assert not missing, f"steps missing from the legend: {missing} (legend: {labels})"
print(f"legend names all {len(steps)} steps")

# Rendered inside a 50 px transparent frame: anything drawn outside the
# declared picture (a clipped label) lands in the frame.
inner = text[text.index(">", text.index("<svg")) + 1:text.rindex("</svg>")]
attrs = " ".join(f'{k}="{v}"' for k, v in root.attrib.items() if k not in ("width", "height"))
open(f"{work}/framed.svg", "w").write(
    f'<svg xmlns="http://www.w3.org/2000/svg" width="{W + 100}" height="{H + 100}">'
    f'<g transform="translate(50,50)" {attrs}>{inner}</g></svg>')
import subprocess
subprocess.run(["rsvg-convert", f"{work}/framed.svg", "-o", f"{work}/framed.png"], check=True)
fw, fh, rows = png(f"{work}/framed.png")
outside = [(x, y) for y in range(fh) for x in range(fw)
           if not (50 <= x < 50 + W and 50 <= y < 50 + H) and rows[y][4 * x + 3] != 0]
assert not outside, f"{len(outside)} pixels drawn outside the picture, e.g. at {outside[:3]} (framed.png)"
print("nothing drawn outside the picture")
PY
note "timeline render: OK"
