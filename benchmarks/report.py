"""BENCHMARKS.md's tables, made from the committed results (issue #34 §5).

    python benchmarks/report.py           # rewrite BENCHMARKS.md's tables in place
    python benchmarks/report.py --check   # exit 1 if BENCHMARKS.md is not what it makes

The page's prose is written by hand; every table sits between two markers,
``<!-- table: NAME -->`` and ``<!-- /table -->``, and is made here from the JSON files in
``benchmarks/results/`` (``tests/test_benchmarks_report.py`` checks that the page is what
this makes). A table comes from one of two places:

* a *computed* table (``COMPUTED`` below) reads a benchmark's own results file, as the
  benchmark wrote it (``kernels.json`` from ``bench_kernels.py --save kernels``,
  ``pile_scale.json``, ``record_cost.json`` …);
* a *listed* table is a ``"tables": {NAME: {"columns": […], "rows": […]}}`` entry of any
  results file: the measurements that cannot be re-run now, transcribed once from the
  page with their original command, date, machine and commit (``"transcribed"`` says
  from where).

Each table is preceded by one generated line that names the command, the machine, the
date, the commit and the load average of its results file.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
PAGE = ROOT / "BENCHMARKS.md"

MARK = re.compile(r"<!-- table: ([\w.-]+) -->\n.*?<!-- /table -->", re.S)
SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def load_results(directory: Path = RESULTS) -> dict[str, dict]:
    """Every ``*.json`` in ``directory``, by file stem."""
    return {p.stem: json.loads(p.read_text(encoding="utf-8"))
            for p in sorted(directory.glob("*.json"))}


def sig(x: float, digits: int = 3) -> str:
    """``x`` to ``digits`` significant figures, trailing zeros kept (0.0440), without an
    exponent; whole numbers of more digits are rounded to units (35, 988)."""
    if x == 0:
        return "0"
    if abs(x) >= 10 ** (digits - 1):
        return f"{x:.0f}"
    text = f"{x:#.{digits}g}"
    if "e" in text:
        exp = int(f"{x:e}".split("e")[1])
        text = f"{x:.{max(digits - 1 - exp, 0)}f}"
    return text.rstrip(".")


def power(n: int) -> str:
    """10³ for 1000."""
    k = len(str(n)) - 1
    return f"10{str(k).translate(SUPERSCRIPT)}" if n == 10 ** k else f"{n:,}"


def load_text(load: object) -> str:
    """A load average as the page writes it: the 1-minute figure, or a range of them."""
    if isinstance(load, str):
        return load
    if isinstance(load, (int, float)):
        return f"{load:.1f}"
    values = [v[0] if isinstance(v, list) else v for v in load]  # type: ignore[union-attr]
    lo, hi = min(values), max(values)
    return f"{lo:.1f}" if round(lo, 1) == round(hi, 1) else f"{lo:.1f}–{hi:.1f}"


def load_phrase(data: dict) -> str:
    """What a results file says of the load: the 1-minute load averages recorded (at the
    start, after each round, at the end), or its own words when they were not."""
    keys = ("load_at_start", "load_before", "load_start", "loadavg_at_start")
    ends = ("load_at_end", "load_after", "load_end", "loadavg_at_end")
    values = [data[k] for k in keys if k in data] + list(data.get("load_per_round", []))
    values += [data[k] for k in ends if k in data]
    if isinstance(data.get("load"), str):
        return data["load"]
    parsed = []
    for v in values:
        if isinstance(v, str):
            v = [float(x) for x in v.split(",")]
        parsed.append(v)
    if not parsed:
        return "load not recorded"
    text = load_text(parsed)
    top = max(v[0] if isinstance(v, list) else v for v in parsed)
    return (f"load average {text} on the 2 CPUs (other jobs)" if top >= 1.5
            else f"load average {text} (quiet)")


def caption(data: dict) -> str:
    """The generated line above a table: command, machine, date, commit, load."""
    when = data["date"] + (f" {data['time']}" if "time" in data else "")
    engine = f" (engine tree {data['engine_tree']})" if "engine_tree" in data else ""
    source = data.get("transcribed")
    tail = f" Transcribed from {source}." if source else ""
    if data.get("note"):
        tail = f" {data['note'][0].upper()}{data['note'][1:]}.{tail}"
    return (f"*`{data['command']}` — {data['machine']}, {when}, commit "
            f"{data.get('commit', 'not recorded')}{engine}, {load_phrase(data)}.{tail}*")


def table(columns: list[str], rows: list[list[str]], align: str = "") -> str:
    """A Markdown table; ``align`` has one letter a column, ``l`` or ``r`` (default:
    the first column left, the others right)."""
    align = align or "l" + "r" * (len(columns) - 1)
    rule = ["---" if a == "l" else "---:" for a in align]
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join(rule) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


# ----------------------------------------------------------------- computed tables


def _us(entry: dict | None) -> str:
    """The best round, and the median of the rounds in brackets."""
    if entry is None:
        return "—"
    runs = sorted(entry["runs"])
    mid = len(runs) // 2
    median = runs[mid] if len(runs) % 2 else (runs[mid - 1] + runs[mid]) / 2
    return f"{sig(entry['best'])} ({sig(median)})"


def kernels(results: dict) -> str:
    """Per-step cost of the explicit and implicit schemes on the torus and the pendulum
    (``bench_kernels.py --rounds N --save kernels``): the best round (the median)."""
    data = results["kernels"]
    per = data["us_per_step"]
    models = list(per)
    schemes = [s for s in per[models[0]] if not s.startswith("yoshida4:")]
    cols = ["scheme"] + [f"{m}, µs/step: best (median)" for m in models]
    cols += ["list rebuilds (torus)"]
    rows = [[f"`{s}`"] + [_us(per[m].get(s)) for m in models]
            + [str(per["torus"][s]["rebuilds"]) if "torus" in per else "—"]
            for s in schemes]
    return caption(data) + "\n\n" + table(cols, rows)


def kernels_yoshida(results: dict) -> str:
    """Yoshida-4 against its base scheme, from the same rounds: best against best."""
    data = results["kernels"]
    per = data["us_per_step"]
    rows = []
    for model, schemes in per.items():
        for s in schemes:
            if s.startswith("yoshida4:") and s.split(":", 1)[1] in schemes:
                base, y4 = schemes[s.split(":", 1)[1]]["best"], schemes[s]["best"]
                rows.append([f"{model}, `{s.split(':', 1)[1]}`", sig(base), sig(y4),
                             f"{y4 / base:.1f}×"])
    cols = ["model, base scheme", "base, µs/step (best)", "`yoshida4:`, µs/step (best)",
            "ratio"]
    return table(cols, rows)


def kernels_dumbbells(results: dict) -> str:
    """The non-spherical schemes on the dumbbells (``--save kernels_dumbbells``)."""
    data = results["kernels_dumbbells"]
    per = data["us_per_step"]["dumbbells"]
    bodies = data["models"]["dumbbells"]["bodies"]
    rows = [[f"`{s}`", _us(e), sig(e["best"] / bodies)] for s, e in per.items()]
    return caption(data) + "\n\n" + table(
        ["scheme", "dumbbells, µs/step: best (median)", "µs per body-step (best)"], rows)


def _pile_best(data: dict, program: str, n: int, threads: int) -> float | None:
    for t in data["timings"]:
        if (t["program"], t["n"], t["threads"]) == (program, n, threads):
            return t["best_us_per_particle_step"]
    return None


def pile_lammps(results: dict) -> str:
    """Ours against LAMMPS, µs per particle-step (``pile_scale.json``)."""
    data = results["pile_scale"]
    rows = []
    for n in data["sizes"]:
        ours = [_pile_best(data, "ours", n, k) for k in (1, 2)]
        lmp = [_pile_best(data, "lammps", n, k) for k in (1, 2)]
        row = [power(n)] + [sig(v) if v else "—" for v in ours + lmp]
        for k in range(2):
            ratio = f"{lmp[k] / ours[k]:.2f}×" if lmp[k] and ours[k] else "—"
            row.append(f"**{ratio}**" if k == 0 and lmp[k] else ratio)
        rows.append(row)
    cols = ["N", "ours, 1 thread", "ours, 2 threads", "LAMMPS, 1 thread",
            "LAMMPS, 2 threads", "ours/LAMMPS, 1 thread", "ours/LAMMPS, 2 threads"]
    return caption(data) + "\n\n" + table(cols, rows)


def _change(v: float, v0: float) -> str:
    pct = round(100 * (v / v0 - 1))
    text = f"+{pct} %" if pct > 0 else f"−{-pct} %"
    return f"{sig(v)} (**{text}**)" if abs(pct) >= 25 and pct > 0 else f"{sig(v)} ({text})"


def pile_curve(results: dict) -> str:
    """The scale curve: the side-by-side run (``pile_scale.json``, one and two threads)
    and the later runs of ours alone (``pile_scale_ours_alone.json``, transcribed)."""
    data = results["pile_scale"]
    alone = results.get("pile_scale_ours_alone", {})
    extra = alone.get("runs", [])
    when = alone.get("side_by_side_time", data.get("time", "")).replace(" UTC", "")
    columns = [(f"1 thread, {when}", lambda n: _pile_best(data, "ours", n, 1))]
    columns += [(f"1 thread, {r['time'].replace(' UTC', '')}",
                 lambda n, r=r: r["one_thread"].get(str(n))) for r in extra]
    columns += [(f"2 threads, {when}", lambda n: _pile_best(data, "ours", n, 2))]
    rows = []
    for n in data["sizes"]:
        row = [power(n)]
        for _, get in columns:
            v, v0 = get(n), get(data["sizes"][0])
            row.append("—" if v is None else sig(v) if n == data["sizes"][0]
                       else _change(v, v0))
        rows.append(row)
    body = table(["N"] + [c for c, _ in columns], rows)
    return caption(alone) + "\n\n" + body if alone else body


def _cost_row(c: dict | None, bold: bool) -> list[str]:
    if c is None:
        return ["—", "—"]
    unit = " s"
    ratio = f"{c['ratio']:.2f}×" if c["ratio"] < 10 else f"{c['ratio']:.0f}×"
    return [f"{sig(c['wall_plain_s'])} → {sig(c['wall_out_s'])}{unit}",
            f"**{ratio}**" if bold else ratio]


CASE_NAMES = {
    ("torus", "command"): "`rrp run torus --t-end 10`, whole command",
    ("torus", "run loop"): "torus, run loop, default recording",
    ("torus-every1000", "run loop"): "torus, run loop, `--every 1000`",
    ("torus-every1", "run loop"): "torus, run loop, `--every 1`",
    ("pile", "run loop"): "10⁴-sphere pile, run loop, `every` 20 to t = 1",
    ("pile-friction", "run loop"): "10⁴-sphere pile, μ = 0.5, run loop, `every` 20 to t = 1.5",
}


def record_cost(results: dict) -> str:
    """What a record costs, before and after issue #36 item 15 (``record_cost.json``,
    ``record_cost_before.json``)."""
    after, before = results["record_cost"], results.get("record_cost_before", {})

    def key(c: dict) -> tuple[str, str]:
        return c["case"], "command" if c["mode"] != "run loop" else "run loop"

    old = {key(c): c for c in before.get("cases", [])}
    rows = []
    for c in sorted(after["cases"], key=lambda c: list(CASE_NAMES).index(key(c))
                    if key(c) in CASE_NAMES else 99):
        name = CASE_NAMES.get(key(c), f"{c['case']}, {c['mode']}")
        whole = key(c)[1] == "command"
        pairs = c["ratio_per_pair"]
        now = _cost_row(c, whole)
        now[1] += f" ({min(pairs):.2f}–{max(pairs):.2f})" if c["ratio"] < 10 else \
            f" ({min(pairs):.0f}–{max(pairs):.0f})"
        records = f"{c['records']:,}".replace(",", " ")
        rows.append([f"{name} ({records})"]
                    + _cost_row(old.get(key(c)), False) + now)
    cols = ["case (records)", "before: plain → `--out`", "ratio", "after: plain → `--out`",
            "ratio (pairs)"]
    text = table(cols, rows)
    if before:
        text = caption(before) + "\n\n" + text
    return caption(after) + "\n\n" + text


def _claim(r: dict) -> str:
    """One cold or warm cell: wall (CPU), with the CPU of the compile the command left
    running in the background where it was measured apart (issue #45)."""
    bg = r.get("background_cpu_s")
    extra = f" + {sig(bg)} s in the background" if bg else ""
    return f"{sig(r['wall_s'])} s ({sig(r['cpu_s'])} s{extra})"


def claims(results: dict) -> str:
    """The README's time claims as a new user meets them (``bench_claims.py``, issue #33
    §9): each command from the newest ``claims-*.json`` that measured it without busy
    processes and from the newest with them (``--busy N``), each row with the load
    average its cold run met, cold and warm, wall and CPU time (and, since issue #45,
    the background compile's CPU apart); a caption for each file used, newest first."""
    stems = sorted((k for k in results if k.startswith("claims-")),
                   key=lambda k: results[k]["date"], reverse=True)
    newest: dict[tuple[str, int], str] = {}
    for stem in stems:
        for label in results[stem]["results"]:
            newest.setdefault((label, results[stem].get("busy_processes", 0)), stem)

    def tag(load: list | None, busy: int) -> str:
        if not load:
            return ""
        lo, hi = min(load), max(load)
        span = f"{lo:.1f}" if round(lo, 1) == round(hi, 1) else f"{lo:.1f}–{hi:.1f}"
        return f" (load {span}{f', {busy} busy processes' if busy else ''})"

    rows = []
    for (label, busy), stem in sorted(newest.items(),
                                      key=lambda kv: ("gui" in kv[0][0], kv[0][0],
                                                      kv[0][1])):
        r = results[stem]["results"][label]
        if "cold" in r:
            c, w = r["cold"], r["warm"]
            rows.append([f"`{label}`{tag(c.get('load'), busy)}", _claim(c), _claim(w),
                         f"{max(c['peak_rss_mb'], w['peak_rss_mb']):.0f} MB"])
            continue
        runs = [r["inner"]] if "inner" in r else [  # the app: bench_compile (once, or
            run["inner"] for run in r.values()]  # each run of an older file)
        load = runs[0]["cold rrp gui"].get("load") if len(runs) == 1 else None
        for what in ("initial state drawn", "first moving frame", "first switch to rk4"):
            rows.append([f"`rrp gui`: {what}{tag(load, busy)}"] + [
                "–".join(sorted({sig(v) for v in (i[f"{k} rrp gui"][what] for i in runs)},
                                key=float)) + " s" for k in ("cold", "warm")] + ["—"])
    cols = ["command", "cold: wall (CPU)", "warm: wall (CPU)", "peak RSS"]
    used = [s for s in stems if s in newest.values()]
    return "\n\n".join(caption(results[s]) for s in used) + "\n\n" + table(cols, rows)


def es_records(results: dict) -> str:
    """What a record costs under energy-stepping, before and now (issue #33 item 2;
    ``bench_es_records.py --save es_records``, and ``es_records_before`` when there)."""
    rows = []
    texts = []
    for stem, label in (("es_records_before", "before"), ("es_records", "now")):
        if stem not in results:
            continue
        texts.append(caption(results[stem]))
        for r in results[stem]["scenarios"]:
            f, c = r["fine"], r["coarse"]
            rows.append([f"{r['scenario']}, {label}",
                         f"{sig(f['wall_s'])} s / {sig(c['wall_s'])} s = {r['ratio']:.2f}×",
                         sig(r["us_per_record"]), f"{f['events']:,} / {c['events']:,}"
                         .replace(",", " ")])
    cols = ["", "every 0.01 / every 1.0", "µs per record", "events (every 0.01 / every 1.0)"]
    return "\n\n".join(texts + [table(cols, rows, "llrr")])


def record_cost_round2(results: dict, stem: str = "record_cost_round2") -> str:
    """What a record costs after round 2 of issue #36 item 15 (small models' frames
    several to a chunk, uncompressed; ``record_cost_round2.json``), and after round 3
    (every model's frames uncompressed unless ``--compress``; ``record_cost_round3.json``):
    the wall ratio, the writer's CPU a record and the stepping thread's wall and CPU µs a
    step."""
    data = results[stem]
    rows = []
    for c in sorted(data["cases"], key=lambda c: (c["mode"] == "run loop", c["case"])):
        whole = c["mode"] != "run loop"
        name = CASE_NAMES.get((c["case"], "command" if whole else "run loop"),
                              f"{c['case']}, {c['mode']}")
        pairs = c["ratio_per_pair"]
        wcpu = c.get("writer_cpu_us_per_record")
        rows.append([
            f"{name} ({c['records']:,})".replace(",", " "),
            f"{sig(c['wall_plain_s'])} → {sig(c['wall_out_s'])} s",
            f"{c['ratio']:.2f}× ({min(pairs):.2f}–{max(pairs):.2f})",
            f"{sig(wcpu)} µs" if wcpu is not None and not whole else "—",
            f"{sig(c['engine_us_per_step_plain'])} → {sig(c['engine_us_per_step_out'])}",
            f"{sig(c['engine_cpu_us_per_step_plain'])} → "
            f"{sig(c['engine_cpu_us_per_step_out'])}"])
    cols = ["case (records)", "plain → `--out`", "ratio (pairs)", "writer's CPU a record",
            "engine wall µs/step", "engine CPU µs/step"]
    return caption(data) + "\n\n" + table(cols, rows)


def frame_filters(results: dict) -> str:
    """The frames' filters and chunking (``bench_frame_filters.py``,
    ``frame_filters.json``): the writer's CPU a record and the file against the raw
    frames, by filter (none and LZF; the file has shuffle and gzip too) and frames a chunk
    K."""
    data = results["frame_filters"]
    loads = [r["load"] for r in data["rows"] if "load" in r]
    head = dict(data, load=f"load average {min(loads):.1f}–{max(loads):.1f} on the 2 CPUs"
                f"{' (other jobs)' if max(loads) > 3 else ''}") if loads else data
    rows = [[f"{r['case']} ({r['bodies']:,} bodies)".replace(",", " "), r["filter"],
             str(r["k"]), f"{sig(r['cpu_us_per_record'])} µs", f"{r['of_raw']:.2f}"]
            for r in data["rows"] if r["filter"] in ("none", "lzf")]
    cols = ["frames", "filter", "K", "writer's CPU a record", "file / raw"]
    return caption(head) + "\n\n" + table(cols, rows, "llrrr")


COMPUTED: dict[str, Callable[[dict], str]] = {
    "claims": claims,
    "es_records": es_records,
    "kernels": kernels,
    "kernels_yoshida": kernels_yoshida,
    "kernels_dumbbells": kernels_dumbbells,
    "pile_lammps": pile_lammps,
    "pile_curve": pile_curve,
    "record_cost": record_cost,
    "record_cost_round2": record_cost_round2,
    "record_cost_round3": lambda results: record_cost_round2(results, "record_cost_round3"),
    "record_cost_springs": lambda results: record_cost_round2(results, "record_cost_springs"),
    "frame_filters": frame_filters,
}


def listed(results: dict) -> dict[str, str]:
    """The ``"tables"`` entries of every results file, by name (a name twice: an error)."""
    out: dict[str, str] = {}
    for stem, data in results.items():
        for name, t in data.get("tables", {}).items():
            if name in out or name in COMPUTED:
                raise SystemExit(f"table {name!r} is made twice ({stem}.json and another)")
            body = table(t["columns"], t["rows"], t.get("align", ""))
            out[name] = body if t.get("no_caption") else caption(data) + "\n\n" + body
    return out


def render(text: str, directory: Path = RESULTS) -> str:
    """``text`` with every marked table made again from the results in ``directory``."""
    results = load_results(directory)
    made = listed(results)

    def fill(m: re.Match) -> str:
        name = m.group(1)
        if name in COMPUTED:
            body = COMPUTED[name](results)
        elif name in made:
            body = made[name]
        else:
            raise SystemExit(f"BENCHMARKS.md names table {name!r}, which no results file "
                             f"in {directory} makes")
        return f"<!-- table: {name} -->\n{body}\n<!-- /table -->"

    return MARK.sub(fill, text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="change nothing; exit 1 if BENCHMARKS.md differs")
    args = ap.parse_args()
    text = PAGE.read_text(encoding="utf-8")
    new = render(text)
    if args.check:
        if new != text:
            print("BENCHMARKS.md is not what benchmarks/report.py makes: run it",
                  file=sys.stderr)
            sys.exit(1)
        return
    PAGE.write_text(new, encoding="utf-8")


if __name__ == "__main__":
    main()
