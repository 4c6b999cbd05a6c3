// Drawing the timeline as SVG: rows, bars by step and outcome, idle tail, axis, legend.
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <sstream>

#include "launcher/timeline/timeline.h"

namespace scimesh::launcher {
namespace {

// Text widths are estimated, generously: a label must never be clipped.
constexpr double kCharW = 7.0;         // 11 px sans-serif, wide glyphs included
constexpr double kTitleCharW = 9.0;    // 14 px
constexpr double kRowH = 18, kChartW = 900, kMargin = 10, kSwatch = 14, kLegendRowH = 20;

double TextW(const std::string& s, double char_w = kCharW) { return char_w * static_cast<double>(s.size()); }

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

// A step's colour, in legend order: a palette of distinct colours, then
// well-spread hues (the golden angle); never red, which marks failures.
std::string Colour(size_t i) {
  static const char* const kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2",
                                         "#edc948", "#9c755f", "#8cd17d", "#499894", "#d4a6c8"};
  constexpr size_t kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);
  if (i < kPaletteSize) return kPalette[i];
  const double hue = 30 + std::fmod(static_cast<double>(i) * 137.508, 300.0);  // 30..330: no red
  return "hsl(" + std::to_string(static_cast<int>(hue)) + ",55%,55%)";
}

// The fill and outline of a bar or a legend swatch in `colour`: solid, the
// patterns "hatch-<pattern>" (failed) or "dots-<pattern>" (stopped), or pale.
std::string Style(const std::string& colour, const std::string& pattern, AttemptEnd end) {
  switch (end) {
    case AttemptEnd::kCompleted: return "fill=\"" + colour + "\"";
    case AttemptEnd::kFailed: return "fill=\"url(#hatch-" + pattern + ")\" stroke=\"#c00\" stroke-width=\"1.5\"";
    case AttemptEnd::kStopped: return "fill=\"url(#dots-" + pattern + ")\" stroke=\"#333\" stroke-width=\"1\"";
    case AttemptEnd::kUnknown: break;
  }
  return "fill=\"" + colour + "\" fill-opacity=\"0.3\" stroke=\"#555\" stroke-dasharray=\"3,2\"";
}

// Failed: the colour hatched with white.
std::string Hatch(const std::string& id, const std::string& colour) {
  return "<pattern id=\"hatch-" + id + "\" patternUnits=\"userSpaceOnUse\" width=\"6\" height=\"6\" " +
         "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"white\"/><rect width=\"3\" " +
         "height=\"6\" fill=\"" + colour + "\"/></pattern>\n";
}

// Stopped: the colour with white dots (mostly colour: a narrow bar still shows it).
std::string Dots(const std::string& id, const std::string& colour) {
  return "<pattern id=\"dots-" + id + "\" patternUnits=\"userSpaceOnUse\" width=\"5\" height=\"5\">" +
         "<rect width=\"5\" height=\"5\" fill=\"" + colour + "\"/><circle cx=\"2.5\" cy=\"2.5\" r=\"1.2\" " +
         "fill=\"white\"/></pattern>\n";
}

constexpr char kKeyColour[] = "#888888";

struct LegendEntry {
  std::string label;
  std::string colour, pattern;
  AttemptEnd style;
};

// The legend: kOutcomeKeys outcome styles, then every step with its colour.
constexpr size_t kOutcomeKeys = 4;
std::vector<LegendEntry> Legend(const Timeline& t, const std::vector<TimelineStep>& steps, bool name_owner) {
  std::vector<LegendEntry> out = {
      {"completed (solid)", kKeyColour, "key", AttemptEnd::kCompleted},
      {"failed (hatched, red outline)", kKeyColour, "key", AttemptEnd::kFailed},
      {"stopped: preempted, cancelled or abandoned (dotted)", kKeyColour, "key", AttemptEnd::kStopped},
      {"unreported or unfinished (pale, dashed)", kKeyColour, "key", AttemptEnd::kUnknown}};
  std::map<std::pair<std::string, std::string>, std::array<int, 3>> counts;  // attempts, failed, stopped
  for (const auto& b : t.bars) {
    auto& c = counts[{b.Owner(), b.step_id}];
    ++c[0];
    c[1] += EndOf(b) == AttemptEnd::kFailed;
    c[2] += EndOf(b) == AttemptEnd::kStopped;
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    const auto& [attempts, failed, stopped] = counts[{steps[i].owner, steps[i].step_id}];
    std::string label = StepLabel(steps[i], name_owner) + " (" + std::to_string(attempts) +
                        (attempts == 1 ? " attempt" : " attempts");
    if (failed > 0) label += ", " + std::to_string(failed) + " failed";
    if (stopped > 0) label += ", " + std::to_string(stopped) + " stopped";
    out.push_back({label + ")", Colour(i), std::to_string(i), AttemptEnd::kCompleted});
  }
  return out;
}

// One row per (node, PU), the allocation's first, then PUs only bars name.
struct ChartRows {
  std::vector<std::pair<std::string, int>> keys;        // (node, PU), top to bottom
  std::map<std::pair<std::string, int>, size_t> index;  // a key's row
  std::vector<std::string> labels;                      // "n1 cpu 0", by row
  double label_w = 0;                                   // the widest label
};

ChartRows RowsOf(const Timeline& t) {
  ChartRows rows;
  auto add_row = [&](const std::string& name, int cpu) {
    if (rows.index.emplace(std::make_pair(name, cpu), rows.keys.size()).second) rows.keys.emplace_back(name, cpu);
  };
  for (const auto& [name, cpus] : t.nodes) {
    for (int c = 0; c < cpus; ++c) add_row(name, c);
  }
  for (const auto& b : t.bars) {
    for (const auto& [name, cpus] : b.cores) {
      for (int c : cpus) add_row(name, c);
    }
  }
  for (const auto& [name, cpu] : rows.keys) {
    rows.labels.push_back(name + " cpu " + std::to_string(cpu));
    rows.label_w = std::max(rows.label_w, TextW(rows.labels.back()));
  }
  return rows;
}

constexpr char kTitle[] = "scimesh-launch timeline";

// The line under the title: steps, attempts, busy span, idle tail, utilization.
std::string Stats(const Timeline& t) {
  return std::to_string(t.StepCount()) + " steps, " + std::to_string(t.bars.size()) + " attempts; busy " +
         Fixed(t.busy_span, 1) + " s, then idle " + Fixed(t.IdleTail(), 1) + " s; core-time utilization " +
         Fixed(100 * t.Utilization(), 1) + " % of the busy span";
}

double EntryWidth(const LegendEntry& e) { return kSwatch + 6 + TextW(e.label) + 20; }

// Where everything goes: the row labels, then the chart; under it the time
// axis, then the legend (the outcome keys' row, then the steps in columns).
// The picture is as wide as its widest text.
struct Layout {
  double left = 0, width = 0, height = 0;
  double top = 60, rows_h = 0, axis_y = 0, legend_y = 0;
  double entry_w = 0;  // a step entry's column in the legend
  size_t columns = 1;  // step entries per legend row
  double span = 1;     // the seconds the chart's width stands for

  double X(double at) const { return left + kChartW * at / span; }
};

Layout LayoutOf(const Timeline& t, const ChartRows& rows, const std::vector<LegendEntry>& legend,
                const std::string& stats) {
  Layout l;
  double keys_w = 0;  // the outcome keys' row
  for (size_t i = 0; i < legend.size(); ++i) {
    if (i < kOutcomeKeys) keys_w += EntryWidth(legend[i]);
    else l.entry_w = std::max(l.entry_w, EntryWidth(legend[i]));
  }
  l.left = kMargin + std::max(rows.label_w, 60.0) + 10;
  const double right = 40;  // the last axis label ends at the chart's edge
  l.width = std::max({l.left + kChartW + right, 2 * kMargin + TextW(kTitle, kTitleCharW),
                      2 * kMargin + TextW(stats), 2 * kMargin + keys_w, 2 * kMargin + l.entry_w});
  l.columns = l.entry_w > 0 ? std::max<size_t>(1, static_cast<size_t>((l.width - 2 * kMargin) / l.entry_w)) : 1;
  const size_t legend_rows = 1 + (legend.size() - kOutcomeKeys + l.columns - 1) / l.columns;
  l.rows_h = kRowH * static_cast<double>(rows.keys.size());
  l.axis_y = l.top + l.rows_h + 16;
  l.legend_y = l.axis_y + 28;
  l.height = l.legend_y + 16 + kLegendRowH * static_cast<double>(legend_rows) + kMargin;
  l.span = t.span > 0 ? t.span : 1;
  return l;
}

// The opening tag, the patterns (a hatch and dots per step, the idle tail's), the
// white background, the title and the stats line.
void WriteHead(std::ostream& s, const Layout& l, size_t steps, const std::string& stats) {
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << Fixed(l.width, 0) << "\" height=\""
    << Fixed(l.height, 0) << "\" font-family=\"sans-serif\" font-size=\"11\">\n<defs>\n";
  s << Hatch("key", kKeyColour) << Dots("key", kKeyColour);
  for (size_t i = 0; i < steps; ++i) s << Hatch(std::to_string(i), Colour(i)) << Dots(std::to_string(i), Colour(i));
  s << "<pattern id=\"idle\" patternUnits=\"userSpaceOnUse\" width=\"8\" height=\"8\" patternTransform=\"rotate(45)\">"
    << "<rect width=\"8\" height=\"8\" fill=\"#e6e6e6\"/><rect width=\"2\" height=\"8\" fill=\"#cccccc\"/></pattern>\n"
    << "</defs>\n<rect width=\"" << Fixed(l.width, 0) << "\" height=\"" << Fixed(l.height, 0)
    << "\" fill=\"white\"/>\n";
  s << "<text x=\"" << kMargin << "\" y=\"22\" font-size=\"14\">" << kTitle << "</text>\n";
  s << "<text x=\"" << kMargin << "\" y=\"40\">" << Escape(stats) << "</text>\n";
}

void WriteRows(std::ostream& s, const ChartRows& rows, const Layout& l) {
  for (size_t r = 0; r < rows.keys.size(); ++r) {
    const double y = l.top + kRowH * static_cast<double>(r);
    s << "<rect x=\"" << l.left << "\" y=\"" << y << "\" width=\"" << kChartW << "\" height=\"" << kRowH - 2
      << "\" fill=\"#f2f2f2\"/>\n<text x=\"" << kMargin << "\" y=\"" << y + kRowH - 6 << "\">"
      << Escape(rows.labels[r]) << "</text>\n";
  }
}

// After the last step ended, across every row, labelled with its length.
void WriteIdleTail(std::ostream& s, const Timeline& t, const Layout& l) {
  const double x = l.X(t.busy_span);
  s << "<g id=\"idle-tail\"><rect x=\"" << Fixed(x, 1) << "\" y=\"" << l.top << "\" width=\""
    << Fixed(l.left + kChartW - x, 1) << "\" height=\"" << l.rows_h - 2 << "\" fill=\"url(#idle)\"/>"
    << "<text x=\"" << Fixed(l.left + kChartW, 1) << "\" y=\"" << l.top - 6 << "\" text-anchor=\"end\">idle tail "
    << Fixed(t.IdleTail(), 1) << " s</text></g>\n";
}

// One bar per attempt and PU, in its step's colour and its outcome's style,
// at least kMinBarWidth wide from its start. The bars widened to the minimum
// are drawn last, over their neighbours: no bar hides them.
void WriteBars(std::ostream& s, const Timeline& t, const std::vector<TimelineStep>& steps, bool name_owner,
               const ChartRows& rows, const Layout& l) {
  std::map<std::pair<std::string, std::string>, size_t> step_index;
  for (size_t i = 0; i < steps.size(); ++i) step_index[{steps[i].owner, steps[i].step_id}] = i;
  auto width = [&](const TimelineBar& b) { return kChartW * (b.end - b.start) / l.span; };
  for (const bool narrow : {false, true}) {
    for (const auto& b : t.bars) {
      if ((width(b) < kMinBarWidth) != narrow) continue;
      const size_t step = step_index.at({b.Owner(), b.step_id});
      const double seconds = b.end - b.start;
      for (const auto& [name, cpus] : b.cores) {
        for (int c : cpus) {
          const double y = l.top + kRowH * static_cast<double>(rows.index.at({name, c}));
          s << "<rect x=\"" << Fixed(l.X(b.start), 1) << "\" y=\"" << y << "\" width=\""
            << Fixed(std::max(kMinBarWidth, width(b)), 1) << "\" height=\"" << kRowH - 2 << "\" "
            << Style(Colour(step), std::to_string(step), EndOf(b)) << "><title>"
            << Escape(StepLabel(steps[step], name_owner)) << " attempt " << b.attempt << " ("
            << Escape(EndName(b)) << ") " << Fixed(seconds, seconds < 1 ? 2 : 1) << " s</title></rect>\n";
        }
      }
    }
  }
}

void WriteAxis(std::ostream& s, const Layout& l) {
  for (int i = 0; i <= 4; ++i) {  // the ends anchored inwards: nothing runs off the picture
    const char* anchor = i == 0 ? "start" : i == 4 ? "end" : "middle";
    s << "<text x=\"" << l.X(l.span * i / 4) << "\" y=\"" << l.axis_y << "\" text-anchor=\"" << anchor << "\">"
      << Fixed(l.span * i / 4, 1) << " s</text>\n";
  }
}

void WriteLegend(std::ostream& s, const std::vector<LegendEntry>& legend, const Layout& l) {
  s << "<g id=\"legend\">\n<text x=\"" << kMargin << "\" y=\"" << l.legend_y
    << "\">outcome of each attempt, and the colour of each step:</text>\n";
  double key_x = kMargin;
  for (size_t i = 0; i < legend.size(); ++i) {
    const size_t step = i - std::min(i, kOutcomeKeys);  // the outcome keys' row, then one row per `columns` steps
    const double x = i < kOutcomeKeys ? key_x : kMargin + l.entry_w * static_cast<double>(step % l.columns);
    const double y = l.legend_y + 8 + kLegendRowH * static_cast<double>(i < kOutcomeKeys ? 0 : 1 + step / l.columns);
    if (i < kOutcomeKeys) key_x += EntryWidth(legend[i]);
    s << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << kSwatch << "\" height=\"" << kSwatch << "\" "
      << Style(legend[i].colour, legend[i].pattern, legend[i].style) << "/><text x=\"" << x + kSwatch + 6
      << "\" y=\"" << y + 11 << "\">" << Escape(legend[i].label) << "</text>\n";
  }
  s << "</g>\n";
}

}  // namespace

std::string TimelineSvg(const Timeline& t) {
  const ChartRows rows = RowsOf(t);
  const std::vector<TimelineStep> steps = t.Steps();
  const bool name_owner = t.Owners().size() > 1;
  const std::vector<LegendEntry> legend = Legend(t, steps, name_owner);
  const std::string stats = Stats(t);
  const Layout layout = LayoutOf(t, rows, legend, stats);

  std::ostringstream s;
  WriteHead(s, layout, steps.size(), stats);
  WriteRows(s, rows, layout);
  if (t.IdleTail() > 0 && !rows.keys.empty()) WriteIdleTail(s, t, layout);
  WriteBars(s, t, steps, name_owner, rows, layout);
  WriteAxis(s, layout);
  WriteLegend(s, legend, layout);
  s << "</svg>\n";
  return s.str();
}

}  // namespace scimesh::launcher
