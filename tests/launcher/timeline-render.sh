#!/usr/bin/env bash
# System test: `scimesh-launch report` draws a timeline that renders
# (rsvg-convert, librsvg2-bin) at the size it declares and draws nothing
# outside the picture (no clipped label): it is rendered again inside a 50 px
# transparent frame, which must stay empty. And what a user reads off it:
# - one legend entry per workflow and step: two runs sharing a step id are two
#   entries, each naming its run (these events, like the launcher's, name no
#   workflow, so the run stands for it), and the summary has a line per run;
# - a preempted or cancelled attempt has a style of its own, listed in the
#   legend, unlike a failed one and a completed one;
# - every attempt is at least 4 px wide, starts where its start time puts it,
#   and shows when rendered: sub-second ones too, on a 71 s timeline.
# The events: steps with long names on a 2-node allocation, a step that
# failed and was retried, one abandoned, one unreported, one preempted then
# retried (both sub-second), one cancelled, a second run, an idle tail.
source "$(dirname "$0")/../lib/harness.sh"
harness_init timeline-render
command -v rsvg-convert >/dev/null || fail "rsvg-convert not found: run scripts/install-deps (librsvg2-bin)"
command -v python3 >/dev/null || fail "python3 not found"

ev=$WORK/events.jsonl
long=mesh-refinement-study-with-a-rather-long-step-name-level-4
{
  echo '{"t":1000,"event":"allocation","worker_id":"w","nodes":[{"name":"node-with-a-long-name-01","cpus":4,"gpus":0},{"name":"n2","cpus":4,"gpus":0}]}'
  # run, step name, attempt, start, end, outcome[:detail], node, cpus
  while read -r run step attempt t0 t1 outcome node cpus; do
    detail=${outcome#*:}
    outcome=${outcome%%:*}
    [[ $detail == "$outcome" ]] && detail=applied
    lease="\"lease_id\":\"l_${run}_${step}_$attempt\",\"run_id\":\"$run\",\"step_id\":\"$step\",\"attempt\":$attempt"
    nodes="[{\"name\":\"$node\",\"ranks\":1,\"cpus\":[$cpus],\"gpus\":[]}]"
    echo "{\"t\":$t0,\"event\":\"place\",$lease,\"nodes\":$nodes}"
    echo "{\"t\":$t0,\"event\":\"start\",$lease}"
    echo "{\"t\":$t1,\"event\":\"end\",$lease,\"exit\":\"exit status 0\"}"
    echo "{\"t\":$t1,\"event\":\"outcome\",$lease,\"outcome\":\"$outcome\",\"detail\":\"$detail\"}"
  done <<EOF
r prepare 1 1000 1004 completed node-with-a-long-name-01 0,1,2,3
r solve-a 1 1004 1030 completed node-with-a-long-name-01 0,1
r mesh 1 1004 1004.05 failed:preempted node-with-a-long-name-01 2
r mesh 2 1004.1 1004.15 completed node-with-a-long-name-01 3
r solve-b 1 1004 1012 failed:retryable n2 0,1
r solve-b 2 1013 1033 completed n2 0,1
r $long 1 1005 1020 abandoned n2 2,3
r $long 2 1021 1040 completed n2 2,3
r report 1 1034 1041 unreported node-with-a-long-name-01 2
r2 solve-a 1 1035 1035.5 completed n2 0
r export 1 1041 1041.3 failed:cancelled node-with-a-long-name-01 3
EOF
  echo '{"t":1041,"event":"claim","offered":0,"max":4}'
  echo '{"t":1071,"event":"claim","offered":0,"max":4}'
} >"$ev"
"$SCIMESH_LAUNCH_BIN" report "$ev" -o "$WORK/timeline.svg" | tee "$WORK/report.txt"
ok=1
for line in 'steps: 8, attempts: 11 (abandoned 1, cancelled 1, completed 6, failed 1, preempted 1, unreported 1)' \
  '  run r: steps: 7, attempts: 10 (abandoned 1, cancelled 1, completed 5, failed 1, preempted 1, unreported 1)' \
  '  run r2: steps: 1, attempts: 1 (completed 1)' \
  'nodes: 2, cpus: 8, busy span: 41.3 s, then idle: 29.7 s'; do
  grep -qxF -- "$line" "$WORK/report.txt" || { echo "the summary lacks the line '$line'" >&2; ok=0; }
done

rsvg-convert "$WORK/timeline.svg" -o "$WORK/timeline.png" || fail "rsvg-convert cannot render the timeline"
python3 - "$WORK" "$ev" <<'PY' || ok=0
import json, math, re, struct, sys, zlib
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

problems = []
def check(good, problem):
    if not good:
        problems.append(problem)

events_list = [json.loads(l) for l in open(events)]
legend = next(g for g in root.iter(NS + "g") if g.get("id") == "legend")
keys = []  # (swatch, label) in the legend
children = list(legend)
for i, el in enumerate(children):
    if el.tag == NS + "rect" and i + 1 < len(children) and children[i + 1].tag == NS + "text":
        keys.append((el, "".join(children[i + 1].itertext())))
labels = [label for _, label in keys]

# 1. One legend entry per workflow and step; the events name no workflow, so per run and step.
pairs = sorted({(e["run_id"], e["step_id"]) for e in events_list if "step_id" in e})
for run, step in pairs:
    n = sum(1 for l in labels if l.startswith(f"run {run} / {step} ("))
    check(n == 1, f"the legend has {n} entries for step '{step}' of run '{run}', want 1")
print(f"legend: {labels}")

# The bars: a rect with a <title> "[<workflow or run> / ]<step> attempt <n> (<outcome>) ...".
bars = []
for r in root.iter(NS + "rect"):
    t = r.find(NS + "title")
    m = re.match(r"(?:.* / )?(.+?) attempt (\d+) \(", t.text or "") if t is not None else None
    if m:
        bars.append((m.group(1), int(m.group(2)), r))
def bar(step, attempt):  # the first of its bars (one per PU)
    found = [r for s, a, r in bars if (s, a) == (step, attempt)]
    assert found, f"no bar for {step} attempt {attempt}"
    return found[0]

# 2. How an attempt is drawn: the fill (a colour, or which pattern), outline, dashes, opacity.
def style(r):
    m = re.match(r"url\(#(.*)-[^-]*\)$", r.get("fill", ""))
    return ("pattern " + m.group(1) if m else "plain", r.get("fill-opacity"), r.get("stroke"),
            r.get("stroke-width"), r.get("stroke-dasharray"))
preempted, cancelled = style(bar("mesh", 1)), style(bar("export", 1))
failed, completed = style(bar("solve-b", 1)), style(bar("prepare", 1))
print(f"styles: preempted {preempted}, cancelled {cancelled}, failed {failed}, completed {completed}")
check(preempted == cancelled, "a preempted and a cancelled attempt are drawn differently")
check(preempted != failed, "a preempted attempt is drawn like a failed one")
check(preempted != completed, "a preempted attempt is drawn like a completed one")
stopped_keys = [label for swatch, label in keys if "preempted" in label and "cancelled" in label]
check(len(stopped_keys) == 1, "the legend has no entry for preempted and cancelled attempts")
check(any(style(swatch) == preempted for swatch, label in keys if label in stopped_keys),
      "the legend's swatch for preempted attempts is not drawn like them")

# 3. Every bar at least 4 px wide, starting where its start time puts it, visible when rendered.
starts = {}
for e in events_list:
    if e["event"] == "start":
        starts.setdefault((e["step_id"], e["attempt"]), []).append(e["t"] - 1000)
x0 = float(bar("prepare", 1).get("x"))  # prepare starts with the first event
px_per_s = (float(bar("report", 1).get("x")) - x0) / 34
_, _, pixels = png(f"{work}/timeline.png")
background = {(255, 255, 255), (242, 242, 242), (230, 230, 230), (204, 204, 204)}  # rows, idle tail
for step, attempt, r in bars:
    x, y, bw, bh = (float(r.get(k)) for k in ("x", "y", "width", "height"))
    name = f"{step} attempt {attempt}"
    check(bw >= 4, f"{name} is {bw} px wide, under the 4 px minimum")
    check(any(abs(x - (x0 + px_per_s * t)) <= 0.15 for t in starts[(step, attempt)]),
          f"{name} starts at x={x}, not at its start time")
    shown = sum(1 for c in range(math.ceil(x), math.floor(x + bw))
                if any(tuple(pixels[row][4 * c:4 * c + 3]) not in background for row in range(int(y) + 1, int(y + bh) - 1)))
    check(shown >= 3, f"{name} shows in {shown} pixel columns of the rendered timeline, want 3 or more")
print(f"{len(bars)} bars, {px_per_s:.2f} px per second")
for p in problems:
    print("PROBLEM:", p)
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
sys.exit(1 if problems else 0)
PY
[[ $ok == 1 ]] || fail "the summary or the rendered timeline is wrong (above)"
note "timeline render: OK"
