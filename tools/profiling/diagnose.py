"""What tools/profile says about a lab: Nsight Compute's raw CSV page read into kernels, the
kernels of one call summed into the figures the lessons speak of, and the symptoms that set a lab
apart from the course's reference, each with the lesson sections that treat it.

Pure functions on text and numbers (no GPU, no ncu): tools/profiling/test_diagnose.py feeds them
recorded ncu output.
"""
import csv
import io
import re
from dataclasses import dataclass, field

# The stall reasons asked of ncu: smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio,
# cycles a warp spent stalled for that reason per instruction issued (the Warp State section).
STALLS = {
    "barrier": "barrier (__syncthreads: warps wait for the rest of their block)",
    "long_scoreboard": "long scoreboard (warps wait for global memory)",
    "short_scoreboard": "short scoreboard (warps wait for shared memory)",
    "mio_throttle": "MIO throttle (the shared-memory pipeline is full)",
    "lg_throttle": "LG throttle (the queue of global loads, stores and atomics is full)",
    "membar": "memory barrier (__threadfence)",
    "wait": "wait (fixed-latency dependencies)",
    "math_pipe_throttle": "math pipe throttle (an arithmetic unit is busy)",
    "no_instruction": "no instruction (instruction fetch)",
    "branch_resolving": "branch resolving",
    "dispatch_stall": "dispatch stall",
    "drain": "drain (stores leaving at exit)",
    "sleeping": "sleeping",
    "tex_throttle": "texture throttle",
    "imc_miss": "constant cache miss",
    "misc": "miscellaneous",
    "not_selected": "not selected (another warp issued: not a problem)",
    "selected": "selected (issuing)",
}
# Reasons that are no problem: a warp was ready and it, or another one, issued.
NOT_STALLS = ("selected", "not_selected")


def stall_metric(reason):
    """The ncu metric of one stall reason."""
    return f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"


# Metric names as ncu 2023-2025 spell them on sm_75 to sm_90 (tools/profile drops any that the
# GPU's ncu does not list, and a missing one is shown as "n/a").
DURATION = "gpu__time_duration.sum"
DRAM_PCT = "dram__throughput.avg.pct_of_peak_sustained_elapsed"
MEMORY_PCT = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
DRAM_READ = "dram__bytes_read.sum"
OCCUPANCY = "sm__warps_active.avg.pct_of_peak_sustained_active"
THEORETICAL = "sm__maximum_warps_per_active_cycle_pct"
INSTRUCTIONS = "smsp__inst_executed.sum"
LANES = "smsp__thread_inst_executed_per_inst_executed.ratio"
GLOBAL_LOADS = "smsp__inst_executed_op_global_ld.sum"
GLOBAL_LOAD_BYTES = "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum"
SHARED_LOADS = "smsp__inst_executed_op_shared_ld.sum"
SHARED_STORES = "smsp__inst_executed_op_shared_st.sum"
CONFLICTS_LD = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
CONFLICTS_ST = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
ATOMICS = ("smsp__inst_executed_op_global_atom.sum", "smsp__inst_executed_op_global_red.sum")
LIMITS = {  # launch__occupancy_limit_<what>: blocks per SM that each resource allows
    "registers": "launch__occupancy_limit_registers",
    "shared memory": "launch__occupancy_limit_shared_mem",
    "warps per SM": "launch__occupancy_limit_warps",
    "blocks per SM": "launch__occupancy_limit_blocks",
}
LAUNCH = ("launch__grid_size", "launch__block_size", "launch__registers_per_thread",
          "launch__waves_per_multiprocessor")

METRICS = ([DURATION, DRAM_PCT, MEMORY_PCT, DRAM_READ, OCCUPANCY, THEORETICAL, INSTRUCTIONS,
            LANES, GLOBAL_LOADS, GLOBAL_LOAD_BYTES, SHARED_LOADS, SHARED_STORES, CONFLICTS_LD,
            CONFLICTS_ST, *ATOMICS, *LIMITS.values(), *LAUNCH,
            "smsp__average_warp_latency_per_inst_issued.ratio"]
           + [stall_metric(r) for r in STALLS])

# Symptom -> the lesson sections that treat it, (lab folder, heading); lessons_for() picks the
# lab's own lesson first, then the latest earlier ones. A CPU test checks that every heading is
# one of labs/<folder>/README.md, so a renamed heading fails it.
LESSONS = {
    "launches": [("15_capstone", "4. One launch or two"),
                 ("02_interleaved_divergent", "One partial per block, and no grid-wide barrier"),
                 ("08_many_per_thread", "Two launches, or one with atomics")],
    "dram": [("08_many_per_thread", "What changed from rung 7, and why it should be faster"),
             ("15_capstone", "2. Enough bytes in flight")],
    "dram_bytes": [("01_atomic_naive", "Coalescing: how a warp reads memory"),
                   ("15_capstone", "1. Roofline first")],
    "bank_conflicts": [("03_interleaved_strided", "Shared-memory banks"),
                       ("04_sequential", "The idea"),
                       ("03_interleaved_strided", "The padding remedy")],
    "occupancy": [("08_many_per_thread",
                   "Fixed grid sizes, and what really limits a grid-stride loop"),
                  ("15_capstone", "2. Enough bytes in flight")],
    "divergence": [("02_interleaved_divergent", "Divergence"),
                   ("03_interleaved_strided", "The idea")],
    "instructions": [("04_sequential", "What is still wasted"),
                     ("05_first_add_load", "What changed from rung 4, and why it should be faster"),
                     ("07_complete_unroll", "The idea"),
                     ("08_many_per_thread",
                      "What changed from rung 7, and why it should be faster"),
                     ("02_interleaved_divergent", "The cost of %")],
    "load_width": [("15_capstone", "2. Enough bytes in flight"),
                   ("08_many_per_thread", "What changed from rung 7, and why it should be faster")],
    "atomics": [("01_atomic_naive", "The idea"),
                ("08_many_per_thread", "Two launches, or one with atomics"),
                ("02_interleaved_divergent", "One partial per block, and no grid-wide barrier")],
    "stall_barrier": [("06_unroll_last_warp", "The idea"),
                      ("02_interleaved_divergent", "Shared memory and the barrier"),
                      ("09_warp_shuffle",
                       "What changed from rung 8, and why it should be faster (and where)")],
    "stall_long_scoreboard": [
        ("08_many_per_thread", "What changed from rung 7, and why it should be faster"),
        ("15_capstone", "2. Enough bytes in flight")],
    "stall_shared": [("03_interleaved_strided", "Shared-memory banks"),
                     ("09_warp_shuffle", "The idea")],
    "stall_lg_throttle": [("15_capstone", "2. Enough bytes in flight"),
                          ("01_atomic_naive", "The idea")],
    "stall_membar": [("15_capstone", "The fence-and-ticket combine, step by step")],
    "stall_other": [("07_complete_unroll", "The idea"),
                    ("04_sequential", "What is still wasted")],
}
STALL_LESSONS = {"barrier": "stall_barrier", "long_scoreboard": "stall_long_scoreboard",
                 "short_scoreboard": "stall_shared", "mio_throttle": "stall_shared",
                 "lg_throttle": "stall_lg_throttle", "membar": "stall_membar"}


# ---- ncu's raw page ------------------------------------------------------------------------

@dataclass
class Kernel:
    """One profiled launch: its name, grid and block, and its metrics (None: n/a)."""
    name: str
    grid: str = ""
    block: str = ""
    metrics: dict = field(default_factory=dict)

    def get(self, metric, default=None):
        """The metric's value, or \\p default where ncu gave none."""
        value = self.metrics.get(metric)
        return default if value is None else value


UNIT_SCALE = {"nsecond": 1.0, "usecond": 1e3, "msecond": 1e6, "second": 1e9,  # to ns
              "byte": 1.0, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12}
FIXED_COLUMNS = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context",
                 "Stream", "Block Size", "Grid Size", "Device", "CC")


def number(text, unit=""):
    """A raw-page value as a float in base units (ns, bytes), or None (n/a, empty, a word)."""
    text = text.strip().replace(",", "")
    try:
        value = float(text)
    except ValueError:
        return None
    return value * UNIT_SCALE.get(unit, 1.0)


def parse_raw_csv(text):
    """Kernels, in launch order, of `ncu --csv --page raw` output: a header row of column names
    (ID, ..., then one per metric), a row of units, then one row per kernel. ncu's own lines
    (==PROF==, ==WARNING==) may come before or after."""
    lines = [line for line in text.splitlines() if line.startswith('"')]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    start = next((i for i, row in enumerate(rows) if row[:1] == ["ID"] and "Kernel Name" in row),
                 None)
    if start is None:
        return []
    header = rows[start]
    body = rows[start + 1:]
    units = body.pop(0) if body and body[0][:1] == [""] else [""] * len(header)
    kernels = []
    for row in body:
        if len(row) != len(header) or not row[0].strip():
            continue
        cells = dict(zip(header, row))
        metrics = {name: number(cells[name], unit) for name, unit in zip(header, units)
                   if name not in FIXED_COLUMNS}
        kernels.append(Kernel(cells.get("Kernel Name", "?"), cells.get("Grid Size", ""),
                              cells.get("Block Size", ""), metrics))
    return kernels


def signature(kernel):
    """What repeats from call to call: the kernel and its launch shape."""
    return (kernel.name, kernel.grid or kernel.get("launch__grid_size"),
            kernel.block or kernel.get("launch__block_size"))


def find_period(kernels, most_offset=2):
    """(offset, launches per call): the shortest pattern that repeats at least twice from
    \\p offset on (a first call may launch a set-up kernel once); None when none repeats."""
    sigs = [signature(k) for k in kernels]
    for period in range(1, len(sigs) // 2 + 1):
        for offset in range(most_offset + 1):
            tail = sigs[offset:]
            if len(tail) >= 2 * period and all(
                    tail[i] == tail[i + period] for i in range(len(tail) - period)):
                return offset, period
    return None


# ---- one call's figures --------------------------------------------------------------------

def total(kernels, metric):
    """The sum of \\p metric over \\p kernels; None where no kernel has it."""
    values = [k.get(metric) for k in kernels if k.get(metric) is not None]
    return sum(values) if values else None


def weighted(kernels, metric, weight):
    """The mean of \\p metric over \\p kernels, weighted by \\p weight (time, instructions)."""
    pairs = [(k.get(metric), k.get(weight)) for k in kernels]
    pairs = [(v, w) for v, w in pairs if v is not None and w is not None]
    weights = sum(w for _, w in pairs)
    if not pairs or weights <= 0:
        return None
    return sum(v * w for v, w in pairs) / weights


def ratio(a, b):
    """a / b, or None where either is missing or b is 0."""
    return None if a is None or b is None or b == 0 else a / b


@dataclass
class Call:
    """The kernels of one call of the lab's entry point and what they add up to."""
    n: int                  # elements of the input
    kernels: list           # its launches, in order
    complete: bool = True   # False: no launch pattern repeated, the call may have more launches
    figures: dict = field(default_factory=dict)

    @property
    def launches(self):
        """Launches in the call."""
        return len(self.kernels)


def limiter(kernel):
    """(resource, blocks per SM) that limits the kernel's occupancy, or None."""
    limits = [(kernel.get(metric), name) for name, metric in LIMITS.items()
              if kernel.get(metric) is not None]
    if not limits:
        return None
    blocks, name = min(limits)
    return name, blocks


def summarize(kernels, n, complete=True):
    """One call's figures: time and memory summed, rates weighted by time, per-instruction
    figures by instructions; the launch shape, occupancy limit and grid of its longest kernel."""
    call = Call(n, list(kernels), complete)
    if not kernels:
        return call
    main = max(kernels, key=lambda k: k.get(DURATION, 0))
    inst = total(kernels, INSTRUCTIONS)
    f = call.figures
    f["time_us"] = ratio(total(kernels, DURATION), 1e3)
    f["dram_pct"] = weighted(kernels, DRAM_PCT, DURATION)
    f["memory_pct"] = weighted(kernels, MEMORY_PCT, DURATION)
    f["dram_bytes_per_element"] = ratio(total(kernels, DRAM_READ), n)
    f["occupancy"] = weighted(kernels, OCCUPANCY, DURATION)
    f["theoretical"] = main.get(THEORETICAL)
    f["waves"] = main.get("launch__waves_per_multiprocessor")
    f["limit"] = limiter(main)
    f["inst_per_element"] = ratio(None if inst is None else inst * 32, n)
    f["lanes"] = weighted(kernels, LANES, INSTRUCTIONS)
    f["bytes_per_load"] = ratio(total(kernels, GLOBAL_LOAD_BYTES), total(kernels, GLOBAL_LOADS))
    f["conflicts_per_load"] = ratio(total(kernels, CONFLICTS_LD), total(kernels, SHARED_LOADS))
    f["conflicts_per_store"] = ratio(total(kernels, CONFLICTS_ST), total(kernels, SHARED_STORES))
    atomics = [total(kernels, m) for m in ATOMICS]
    f["atomics"] = None if all(a is None for a in atomics) else sum(a or 0 for a in atomics)
    f["stalls"] = {r: weighted(kernels, stall_metric(r), INSTRUCTIONS) for r in STALLS}
    f["registers"] = main.get("launch__registers_per_thread")
    f["grid"] = main.grid or main.get("launch__grid_size")
    f["block"] = main.block or main.get("launch__block_size")
    return call


def first_call(kernels, n):
    """The first whole call among the profiled \\p kernels (all of them, marked incomplete,
    where no launch pattern repeats)."""
    found = find_period(kernels)
    if found is None:
        return summarize(kernels, n, complete=False)
    offset, period = found
    return summarize(kernels[offset:offset + period], n)


def top_stall(call):
    """(reason, cycles per issued instruction) of the call's largest stall, or None."""
    stalls = {r: v for r, v in call.figures.get("stalls", {}).items()
              if v is not None and r not in NOT_STALLS}
    if not stalls:
        return None
    reason = max(stalls, key=stalls.get)
    return reason, stalls[reason]


# ---- the diagnosis ---------------------------------------------------------------------------

@dataclass
class Symptom:
    """Something that sets the lab apart, in words, and the LESSONS key of where it is taught."""
    key: str
    text: str


@dataclass
class Context:
    """What the rules know of the lab beyond its profile."""
    lab: int = 0             # the lab's number (lessons up to it are cited first)
    streaming: bool = False  # graded against the ceiling probe: it should read near the peak


def fig(call, name):
    """A figure of \\p call, None where the call or the figure is missing."""
    return None if call is None else call.figures.get(name)


def launches_rule(y, r, ctx):
    """More launches per call than the reference (or many without one)."""
    at_least = "" if y.complete else "at least "
    if r is not None and r.kernels and r.complete:
        if y.launches > r.launches:
            return (f"{at_least}{y.launches} launches per call where the reference uses "
                    f"{r.launches}")
        return None
    if y.launches > 4:
        return f"{at_least}{y.launches} launches per call, each waiting for the one before"
    return None


def dram_rule(y, r, ctx):
    """DRAM busy far less than the reference keeps it."""
    yd, rd = fig(y, "dram_pct"), fig(r, "dram_pct")
    if yd is None:
        return None
    if rd is not None:
        if yd < 0.8 * rd and rd - yd >= 10:
            return f"DRAM throughput {yd:.0f}% of peak while the reference reaches {rd:.0f}%"
        return None
    if ctx.streaming and yd < 60:
        return (f"DRAM throughput {yd:.0f}% of peak, where this lab is graded against a "
                "streaming read of the whole input")
    return None


def dram_bytes_rule(y, r, ctx):
    """More bytes fetched from DRAM than the input holds."""
    yb, rb = fig(y, "dram_bytes_per_element"), fig(r, "dram_bytes_per_element")
    if yb is None or yb <= 4.5 or (rb is not None and yb <= 1.15 * max(rb, 4.0)):
        return None
    also = f" (the reference: {rb:.1f})" if rb is not None else ""
    return f"{yb:.1f} bytes read from DRAM per element, where the input holds 4{also}"


def conflicts_rule(y, r, ctx):
    """Shared-memory bank conflicts the reference does not have."""
    found = []
    for what, name in (("load", "conflicts_per_load"), ("store", "conflicts_per_store")):
        yc, rc = fig(y, name), fig(r, name)
        if yc is None or yc < 0.5:
            continue
        if rc is None and yc >= 1.0:
            none = "" if r is None else f" where the reference makes no shared {what}s"
            found.append(f"{yc:.1f} per shared {what}{none}")
        elif rc is not None and yc >= 2 * rc + 0.25:
            found.append(f"{yc:.1f} per shared {what} where the reference has {rc:.1f}")
    return "bank conflicts: " + "; ".join(found) if found else None


def occupancy_rule(y, r, ctx):
    """Fewer warps resident than the reference keeps."""
    yo, ro = fig(y, "occupancy"), fig(r, "occupancy")
    if yo is None:
        return None
    if ro is not None:
        if not (yo < 0.75 * ro and ro - yo >= 15):
            return None
    elif not (ctx.streaming and yo < 40):
        return None
    why = ""
    theoretical, limit, waves = fig(y, "theoretical"), fig(y, "limit"), fig(y, "waves")
    if theoretical is not None and theoretical < 99 and limit is not None:
        per = (f", {fig(y, 'registers'):.0f} per thread" if limit[0] == "registers"
               and fig(y, "registers") is not None else "")
        why = f" (theoretical {theoretical:.0f}%, limited by {limit[0]}{per})"
    elif waves is not None and waves < 1:
        why = f" (the grid fills {waves:.2f} of one wave of the GPU)"
    also = f" where the reference reaches {ro:.0f}%" if ro is not None else ""
    return f"achieved occupancy {yo:.0f}%{why}{also}"


def divergence_rule(y, r, ctx):
    """Warps that issue with most of their lanes idle."""
    yl, rl = fig(y, "lanes"), fig(r, "lanes")
    if yl is None or yl >= 24 or (rl is not None and yl >= rl - 4) or (rl is None and yl >= 20):
        return None
    also = f" (the reference: {rl:.1f})" if rl is not None else ""
    return (f"{yl:.1f} of 32 lanes work per instruction on average{also}: the others idle, in "
            "divergent or part-filled warps")


def instructions_rule(y, r, ctx):
    """Many more instructions per element than the reference."""
    yi, ri = fig(y, "inst_per_element"), fig(r, "inst_per_element")
    if yi is None or ri is None or not (yi > 1.5 * ri and yi - ri > 0.5):
        return None
    return (f"{yi:.1f} instructions per element where the reference needs {ri:.1f} "
            "(warp instructions x 32 / n)")


def load_width_rule(y, r, ctx):
    """Narrower loads than the reference's, where DRAM is less busy too."""
    yw, rw = fig(y, "bytes_per_load"), fig(r, "bytes_per_load")
    yd, rd = fig(y, "dram_pct"), fig(r, "dram_pct")
    if None in (yw, rw, yd, rd) or not (yw < 0.6 * rw and yd < rd - 5):
        return None
    return (f"{yw:.0f} bytes per warp load instruction ({yw / 32:.0f} per lane) where the "
            f"reference moves {rw:.0f} ({rw / 32:.0f} per lane): fewer bytes in flight")


def atomics_rule(y, r, ctx):
    """Many more global atomics per call than the reference."""
    ya, ra = fig(y, "atomics"), fig(r, "atomics")
    if ya is None:
        return None
    if ra is not None:
        if ya > 4 * ra + 256:
            return (f"{ya:,.0f} global atomic instructions (warp-wide) per call where the "
                    f"reference issues {ra:,.0f}")
        return None
    if r is None and ya > y.n / 64:
        return f"{ya:,.0f} global atomic instructions (warp-wide) per call: one address, one queue"
    return None


def stall_rule(y, r, ctx):
    """Warps stalled mostly for one reason, more than the reference's."""
    top = top_stall(y)
    if top is None:
        return None
    reason, value = top
    stalls = [v for k, v in y.figures["stalls"].items() if v is not None and k not in NOT_STALLS]
    if value < 0.35 * sum(stalls):
        return None
    theirs = None if r is None else r.figures.get("stalls", {}).get(reason)
    if r is not None and value <= 1.5 * (theirs or 0.0) + 0.5:
        return None
    also = f", the reference {theirs:.1f}" if theirs is not None else ""
    return (STALL_LESSONS.get(reason, "stall_other"),
            f"stalls mostly on {STALLS[reason]}: {value:.1f} cycles per issued "
            f"instruction{also}")


RULES = [("launches", launches_rule), ("dram", dram_rule), ("dram_bytes", dram_bytes_rule),
         ("atomics", atomics_rule), ("bank_conflicts", conflicts_rule),
         ("divergence", divergence_rule), ("occupancy", occupancy_rule),
         ("instructions", instructions_rule), ("load_width", load_width_rule),
         ("stall", stall_rule)]


def diagnose(yours, reference, ctx):
    """The symptoms of \\p yours (a Call), beside \\p reference (a Call or None)."""
    if not yours.kernels:
        return []
    found = []
    for key, rule in RULES:
        said = rule(yours, reference, ctx)
        if isinstance(said, tuple):
            key, said = said
        if said:
            found.append(Symptom(key, said))
    return found


def lessons_for(key, lab, most=2):
    """The sections of LESSONS[key] to cite for lab \\p lab: its own lesson first, then the
    latest earlier ones (the table's order within a lesson); a later lesson only where no
    lesson up to \\p lab treats it."""
    entries = LESSONS[key]
    number_of = lambda entry: int(entry[0][:2])  # noqa: E731
    known = [e for e in entries if number_of(e) <= lab] if lab else list(entries)
    known.sort(key=lambda e: (number_of(e) != lab, -number_of(e)))  # stable within a lesson
    return (known or sorted(entries, key=number_of)[:1])[:most]


def cite(entry):
    """A lesson section as the report prints it."""
    folder, heading = entry
    return f'lesson {folder[:2]}, "{heading}" (labs/{folder}/README.md)'


# ---- the report ------------------------------------------------------------------------------

def shape(text):
    """A launch dimension as ncu prints it, "(1024, 1, 1)", shortened to "1024"."""
    if text is None:
        return None
    text = str(text).strip("() ")
    text = re.sub(r"(, 1)+$", "", text)
    return text.replace(".0", "") if re.fullmatch(r"[\d.]+", text) else text


def stall_rows(yours, reference):
    """Table rows for the three largest stall reasons of either side."""
    reasons = []
    for call in (yours, reference):
        stalls = {} if call is None else call.figures.get("stalls", {})
        ranked = sorted((r for r in stalls if stalls[r] is not None and r not in NOT_STALLS),
                        key=lambda r: -stalls[r])
        reasons += [r for r in ranked[:3] if r not in reasons]
    return [(f"stall cycles per instruction: {r.replace('_', ' ')}",
             lambda c, r=r: c.figures.get("stalls", {}).get(r), "{:.2f}") for r in reasons]


def limit_text(call):
    """What limits the longest kernel's theoretical occupancy ("none" at full occupancy)."""
    limit, theoretical = call.figures.get("limit"), call.figures.get("theoretical")
    if limit is None or theoretical is None:
        return None
    return limit[0] if theoretical < 99 else "none"


def launches_text(call):
    """Launches per call, "8+" where the call's end was not seen."""
    return f"{call.launches}" + ("" if call.complete else "+")


ROWS = [
    ("launches per call", launches_text, "{}"),
    ("kernel time per call (us, at ncu's clocks)", "time_us", "{:.1f}"),
    ("DRAM throughput (% of peak)", "dram_pct", "{:.1f}"),
    ("memory throughput, busiest unit (% of peak)", "memory_pct", "{:.1f}"),
    ("DRAM bytes read per element", "dram_bytes_per_element", "{:.2f}"),
    ("achieved occupancy (%)", "occupancy", "{:.1f}"),
    ("theoretical occupancy (%), longest kernel", "theoretical", "{:.0f}"),
    ("occupancy limited by", lambda c: limit_text(c), "{}"),
    ("grid x block, longest kernel",
     lambda c: None if c.figures.get("grid") is None else
     f"{shape(c.figures['grid'])} x {shape(c.figures.get('block'))}", "{}"),
    ("registers per thread", "registers", "{:.0f}"),
    ("instructions per element (warp x 32 / n)", "inst_per_element", "{:.2f}"),
    ("active lanes per instruction (of 32)", "lanes", "{:.1f}"),
    ("bytes per global load instruction", "bytes_per_load", "{:.0f}"),
    ("bank conflicts per shared load", "conflicts_per_load", "{:.2f}"),
    ("bank conflicts per shared store", "conflicts_per_store", "{:.2f}"),
    ("global atomic instructions per call", "atomics", "{:,.0f}"),
]


def cell(call, getter, form):
    """One table cell: "-" without a call, "n/a" without the figure."""
    if call is None or not call.kernels:
        return "-"
    value = getter(call) if callable(getter) else call.figures.get(getter)
    return "n/a" if value is None else form.format(value)


def format_table(yours, reference):
    """The table: one row per figure, your value beside the reference's."""
    rows = [("", "yours", "reference" if reference is not None else "")]
    for label, getter, form in ROWS + stall_rows(yours, reference):
        rows.append((label, cell(yours, getter, form),
                     cell(reference, getter, form) if reference is not None else ""))
    width = max(len(r[0]) for r in rows)
    return "\n".join(f"  {a:<{width}}  {b:>14}  {c:>14}".rstrip() for a, b, c in rows)


def time_line(yours, reference):
    """How the two calls' kernel times compare, in one line ("" where either is missing)."""
    y, r = fig(yours, "time_us"), fig(reference, "time_us")
    if y is None or r is None or r <= 0:
        return ""
    return (f"Your call's kernels take {y / r:.2f} times as long as the reference's "
            f"({y:.1f} against {r:.1f} us under ncu).")


def format_diagnosis(symptoms, lab, reference_ran):
    """The diagnosis: each symptom and the lesson sections that treat it."""
    if not symptoms:
        beside = " beside the reference" if reference_ran else ""
        return ("No symptom stands out" + beside + ". Time it as the grader does (tools/ladder "
                "-s 2^28, with the reference tree and with yours) before changing the code.")
    lines = []
    for symptom in symptoms:
        lines.append(f"- {symptom.text}")
        lines += [f"    see {cite(entry)}" for entry in lessons_for(symptom.key, lab)]
    return "\n".join(lines)


# ---- when it cannot profile ------------------------------------------------------------------

PERMISSION_ERROR = "ERR_NVGPUCTRPERM"


def permission_denied(text):
    """Whether ncu's output says that this user may not read the GPU's counters."""
    return PERMISSION_ERROR in text


def permission_help(lab, build, tree="labs", family="sum"):
    """What to do when ncu may not read the counters (NVIDIA's page on ERR_NVGPUCTRPERM); the
    ladder lines time \\p tree's lab in the benchmark's row \\p family (segmented_sum_32 for
    lab 17's rows of 32: tools/ladder's -o takes the family)."""
    op = "" if family == "sum" else f"-o {family} "
    return f"""\
tools/profile: ncu may not read this GPU's performance counters ({PERMISSION_ERROR}): the
driver lets only administrators profile (`grep RmProfilingAdminOnly /proc/driver/nvidia/params`
prints 1). Any one of these allows it (https://developer.nvidia.com/ERR_NVGPUCTRPERM):
  - run it as root, keeping your PATH:
      sudo env "PATH=$PATH" tools/profile {lab}
  - let every user profile until the next reboot (no GPU program may be running):
      sudo modprobe -rf nvidia_uvm nvidia_drm nvidia_modeset nvidia
      sudo modprobe nvidia NVreg_RestrictProfilingToAdminUsers=0
  - let every user profile for good:
      echo 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' | \\
        sudo tee /etc/modprobe.d/nvidia-profiling.conf
      sudo update-initramfs -u -k all     (then reboot)
  - in a container, the host allows it: the module option above on the host, or the container
    started with --cap-add=SYS_ADMIN
Meanwhile, without counters: time your rung beside CUB and the ceiling probe, then the course's
reference rung, at the graded size, and read the lesson's "Measured" section:
  tools/ladder -B {build} -t {tree} {op}-r {lab} -s 2^28
  tools/ladder {op}-r {lab} -s 2^28          (a build of the default preset, with solutions/)"""


def ncu_missing_help(lab):
    """Where Nsight Compute comes from."""
    return f"""\
tools/profile: ncu (Nsight Compute) is not on PATH, nor in $CUDA_HOME/bin or /usr/local/cuda/bin.
It comes with the CUDA toolkit; where yours lacks it, install it with one of:
  sudo apt install cuda-nsight-compute-12-9   (NVIDIA's CUDA repository; your toolkit's version)
  conda install -c nvidia nsight-compute
  the installer from https://developer.nvidia.com/nsight-compute
then put its folder on PATH, or name it: NCU=/path/to/ncu tools/profile {lab}"""


NO_GPU = ("tools/profile: no NVIDIA GPU here, so nothing was profiled. Run it on a machine with "
          "one (README, \"Where to get a GPU\").")
