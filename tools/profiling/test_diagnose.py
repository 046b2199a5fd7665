#!/usr/bin/env python3
"""tools/profile without a GPU: its parsing of Nsight Compute's raw CSV page, its diagnosis of
a bank-conflicted tree and of a slow streaming read beside the course's references, its messages
when ncu cannot profile, its lesson map against the lessons' headings, and the whole script run
with a stand-in ncu, benchmark and nvidia-smi.

The recorded pages below are written in the form `ncu --import R --csv --page raw --print-units
base` prints: a header row (the fixed columns, then the metrics in alphabetical order), a row of
units, one row per kernel in launch order; values grouped by thousands, "n/a" where the GPU gave
no value. SLOW is as ncu prints it live, with its ==PROF== lines around the table.
"""
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
import diagnose  # noqa: E402
import plan  # noqa: E402

N = 268433409  # 2^28 - 2047, the size tools/profile takes by default

# The head of every recorded page: ncu --csv --page raw --print-units base, its metric names and
# their units.
PAGE_HEAD = """\
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","dram__bytes_read.sum","dram__throughput.avg.pct_of_peak_sustained_elapsed","gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed","gpu__time_duration.sum","l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum","l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum","l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum","launch__block_size","launch__grid_size","launch__occupancy_limit_blocks","launch__occupancy_limit_registers","launch__occupancy_limit_shared_mem","launch__occupancy_limit_warps","launch__registers_per_thread","launch__waves_per_multiprocessor","sm__maximum_warps_per_active_cycle_pct","sm__warps_active.avg.pct_of_peak_sustained_active","smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio","smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio","smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio","smsp__average_warps_issue_stalled_selected_per_issue_active.ratio","smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio","smsp__inst_executed.sum","smsp__inst_executed_op_global_atom.sum","smsp__inst_executed_op_global_ld.sum","smsp__inst_executed_op_global_red.sum","smsp__inst_executed_op_shared_ld.sum","smsp__inst_executed_op_shared_st.sum","smsp__thread_inst_executed_per_inst_executed.ratio"
"","","","","","","","","","","","byte","%","%","nsecond","","","byte","","","block","block","block","block","register/thread","","%","%","","","","","","inst","inst","inst","inst","inst","inst",""
"""

# A tree with a strided index (lab 03's pattern) in a lab 04: four launches per call (2^28 ->
# 2^20 -> 2^12 -> 16 -> 1 partials), two calls profiled; about 2.9 bank conflicts per shared load.
STRIDED = PAGE_HEAD + """\
"0","4711","reduce_lab_runner","127.0.0.1","void reduce_strided<256u>(const float *, unsigned long, float *)","1","13","(256, 1, 1)","(1048569, 1, 1)","0","9.0","1,073,750,016","17.60","45.20","1,472,000","73,399,830","36,699,915","1,073,733,636","256","1,048,569","32","10","32","8","16","992.96","100","88.10","7.90","3.00","5.20","1.00","9.40","335,542,080","0","8,388,545","0","25,165,656","20,971,380","26.40"
"1","4711","reduce_lab_runner","127.0.0.1","void reduce_strided<256u>(const float *, unsigned long, float *)","1","13","(256, 1, 1)","(4096, 1, 1)","0","9.0","4,194,560","5.10","12.30","9,120","286,720","143,360","4,194,276","256","4,096","32","10","32","8","16","3.88","100","71.50","4.10","6.20","0.40","1.00","1.30","1,310,720","0","32,768","0","98,304","81,920","26.40"
"2","4711","reduce_lab_runner","127.0.0.1","void reduce_strided<256u>(const float *, unsigned long, float *)","1","13","(256, 1, 1)","(16, 1, 1)","0","9.0","16,384","0.20","0.60","3,040","1,120","560","16,384","256","16","32","10","32","8","16","0.02","100","11.90","4.10","6.20","0.40","1.00","1.30","5,120","0","128","0","384","320","26.40"
"3","4711","reduce_lab_runner","127.0.0.1","void reduce_strided<256u>(const float *, unsigned long, float *)","1","13","(256, 1, 1)","(1, 1, 1)","0","9.0","0","0.00","0.10","2,880","70","35","64","256","1","32","10","32","8","16","0.00","100","6.20","4.10","6.20","0.40","1.00","1.30","320","0","8","0","24","20","26.40"
"4","4711","reduce_lab_runner","127.0.0.1","void reduce_strided<256u>(const float *, unsigned long, float *)","1","13","(256, 1, 1)","(1048569, 1, 1)","0","9.0","1,073,750,016","17.60","45.20","1,472,000","73,399,830","36,699,915","1,073,733,636","256","1,048,569","32","10","32","8","16","992.96","100","88.10","7.90","3.00","5.20","1.00","9.40","335,542,080","0","8,388,545","0","25,165,656","20,971,380","26.40"
"5","4711","reduce_lab_runner","127.0.0.1","void reduce_strided<256u>(const float *, unsigned long, float *)","1","13","(256, 1, 1)","(4096, 1, 1)","0","9.0","4,194,560","5.10","12.30","9,120","286,720","143,360","4,194,276","256","4,096","32","10","32","8","16","3.88","100","71.50","4.10","6.20","0.40","1.00","1.30","1,310,720","0","32,768","0","98,304","81,920","26.40"
"6","4711","reduce_lab_runner","127.0.0.1","void reduce_strided<256u>(const float *, unsigned long, float *)","1","13","(256, 1, 1)","(16, 1, 1)","0","9.0","16,384","0.20","0.60","3,040","1,120","560","16,384","256","16","32","10","32","8","16","0.02","100","11.90","4.10","6.20","0.40","1.00","1.30","5,120","0","128","0","384","320","26.40"
"7","4711","reduce_lab_runner","127.0.0.1","void reduce_strided<256u>(const float *, unsigned long, float *)","1","13","(256, 1, 1)","(1, 1, 1)","0","9.0","0","0.00","0.10","2,880","70","35","64","256","1","32","10","32","8","16","0.00","100","6.20","4.10","6.20","0.40","1.00","1.30","320","0","8","0","24","20","26.40"
"""

# Lab 04's reference: the same passes, sequential addressing, a residue of conflicts.
SEQUENTIAL = PAGE_HEAD + """\
"0","4720","reduce_lab_runner","127.0.0.1","void reduce_sequential<256u>(const float *, unsigned long, float *)","1","13","(256, 1, 1)","(1048569, 1, 1)","0","9.0","1,073,750,016","21.60","30.80","1,151,000","503,313","0","1,073,733,636","256","1,048,569","32","10","32","8","16","992.96","100","89.30","9.80","3.10","0.90","1.00","2.10","301,987,584","0","8,388,545","0","25,165,656","20,971,380","27.10"
"1","4720","reduce_lab_runner","127.0.0.1","void reduce_sequential<256u>(const float *, unsigned long, float *)","1","13","(256, 1, 1)","(4096, 1, 1)","0","9.0","4,194,560","5.20","9.80","8,960","1,966","0","4,194,276","256","4,096","32","10","32","8","16","3.88","100","72.00","4.10","6.20","0.40","1.00","1.30","1,179,648","0","32,768","0","98,304","81,920","27.10"
"2","4720","reduce_lab_runner","127.0.0.1","void reduce_sequential<256u>(const float *, unsigned long, float *)","1","13","(256, 1, 1)","(16, 1, 1)","0","9.0","16,384","0.20","0.50","3,010","8","0","16,384","256","16","32","10","32","8","16","0.02","100","12.00","4.10","6.20","0.40","1.00","1.30","4,608","0","128","0","384","320","27.10"
"3","4720","reduce_lab_runner","127.0.0.1","void reduce_sequential<256u>(const float *, unsigned long, float *)","1","13","(256, 1, 1)","(1, 1, 1)","0","9.0","0","0.00","0.10","2,850","0","0","64","256","1","32","10","32","8","16","0.00","100","6.20","4.10","6.20","0.40","1.00","1.30","288","0","8","0","24","20","27.10"
"4","4720","reduce_lab_runner","127.0.0.1","void reduce_sequential<256u>(const float *, unsigned long, float *)","1","13","(256, 1, 1)","(1048569, 1, 1)","0","9.0","1,073,750,016","21.60","30.80","1,151,000","503,313","0","1,073,733,636","256","1,048,569","32","10","32","8","16","992.96","100","89.30","9.80","3.10","0.90","1.00","2.10","301,987,584","0","8,388,545","0","25,165,656","20,971,380","27.10"
"5","4720","reduce_lab_runner","127.0.0.1","void reduce_sequential<256u>(const float *, unsigned long, float *)","1","13","(256, 1, 1)","(4096, 1, 1)","0","9.0","4,194,560","5.20","9.80","8,960","1,966","0","4,194,276","256","4,096","32","10","32","8","16","3.88","100","72.00","4.10","6.20","0.40","1.00","1.30","1,179,648","0","32,768","0","98,304","81,920","27.10"
"6","4720","reduce_lab_runner","127.0.0.1","void reduce_sequential<256u>(const float *, unsigned long, float *)","1","13","(256, 1, 1)","(16, 1, 1)","0","9.0","16,384","0.20","0.50","3,010","8","0","16,384","256","16","32","10","32","8","16","0.02","100","12.00","4.10","6.20","0.40","1.00","1.30","4,608","0","128","0","384","320","27.10"
"7","4720","reduce_lab_runner","127.0.0.1","void reduce_sequential<256u>(const float *, unsigned long, float *)","1","13","(256, 1, 1)","(1, 1, 1)","0","9.0","0","0.00","0.10","2,850","0","0","64","256","1","32","10","32","8","16","0.00","100","6.20","4.10","6.20","0.40","1.00","1.30","288","0","8","0","24","20","27.10"
"""

# Lab 09's reference: a grid sized from the GPU, then one block over its partials: two launches.
STREAMING = PAGE_HEAD + """\
"0","4730","reduce_lab_runner","127.0.0.1","void reduce::grid_stride_sum<256u>(const float *, unsigned long, float *)","1","13","(256, 1, 1)","(1056, 1, 1)","0","9.0","1,073,752,064","91.40","91.40","244,600","0","0","1,073,733,636","256","1,056","32","10","32","8","30","1.00","100","85.20","0.10","24.60","0.05","1.00","0.20","18,454,797","0","8,388,545","0","1,056","8,448","31.90"
"1","4730","reduce_lab_runner","127.0.0.1","void reduce::grid_stride_sum<256u>(const float *, unsigned long, float *)","1","13","(256, 1, 1)","(1, 1, 1)","0","9.0","4,224","0.30","0.40","3,200","0","0","4,224","256","1","32","10","32","8","30","0.00","100","6.10","2.30","5.50","0.10","1.00","0.60","410","0","33","0","1","8","30.20"
"2","4730","reduce_lab_runner","127.0.0.1","void reduce::grid_stride_sum<256u>(const float *, unsigned long, float *)","1","13","(256, 1, 1)","(1056, 1, 1)","0","9.0","1,073,752,064","91.40","91.40","244,600","0","0","1,073,733,636","256","1,056","32","10","32","8","30","1.00","100","85.20","0.10","24.60","0.05","1.00","0.20","18,454,797","0","8,388,545","0","1,056","8,448","31.90"
"3","4730","reduce_lab_runner","127.0.0.1","void reduce::grid_stride_sum<256u>(const float *, unsigned long, float *)","1","13","(256, 1, 1)","(1, 1, 1)","0","9.0","4,224","0.30","0.40","3,200","0","0","4,224","256","1","32","10","32","8","30","0.00","100","6.10","2.30","5.50","0.10","1.00","0.60","410","0","33","0","1","8","30.20"
"""

# A lab 09 with 256 blocks and one accumulator, and a third launch to write the result.
SLOW = """\
==PROF== Connected to process 4740 (/work/main/build-student/bin/reduce_lab_runner)
==PROF== Profiling "sum_kernel" - 0: 0%....50%....100% - 21 passes
""" + PAGE_HEAD + """\
"0","4740","reduce_lab_runner","127.0.0.1","sum_kernel(const float *, unsigned long, float *)","1","13","(256, 1, 1)","(256, 1, 1)","0","9.0","1,073,752,064","36.20","36.50","621,000","0","0","1,073,733,636","256","256","32","10","32","8","22","0.24","100","23.40","0.20","41.30","0.10","1.00","0.30","33,554,176","0","8,388,545","0","256","2,048","31.80"
"1","4740","reduce_lab_runner","127.0.0.1","sum_kernel(const float *, unsigned long, float *)","1","13","(256, 1, 1)","(1, 1, 1)","0","9.0","1,024","0.10","0.20","3,100","0","0","1,024","256","1","32","10","32","8","22","0.00","100","6.00","2.30","5.50","0.10","1.00","0.60","120","0","8","0","1","8","30.00"
"2","4740","reduce_lab_runner","127.0.0.1","write_result(const float *, float *)","1","13","(32, 1, 1)","(1, 1, 1)","0","9.0","0","n/a","0.00","1,900","0","0","4","32","1","32","10","32","8","22","0.00","100","1.60","2.30","5.50","0.10","1.00","0.60","12","0","1","0","0","0","1.00"
"3","4740","reduce_lab_runner","127.0.0.1","sum_kernel(const float *, unsigned long, float *)","1","13","(256, 1, 1)","(256, 1, 1)","0","9.0","1,073,752,064","36.20","36.50","621,000","0","0","1,073,733,636","256","256","32","10","32","8","22","0.24","100","23.40","0.20","41.30","0.10","1.00","0.30","33,554,176","0","8,388,545","0","256","2,048","31.80"
"4","4740","reduce_lab_runner","127.0.0.1","sum_kernel(const float *, unsigned long, float *)","1","13","(256, 1, 1)","(1, 1, 1)","0","9.0","1,024","0.10","0.20","3,100","0","0","1,024","256","1","32","10","32","8","22","0.00","100","6.00","2.30","5.50","0.10","1.00","0.60","120","0","8","0","1","8","30.00"
"5","4740","reduce_lab_runner","127.0.0.1","write_result(const float *, float *)","1","13","(32, 1, 1)","(1, 1, 1)","0","9.0","0","n/a","0.00","1,900","0","0","4","32","1","32","10","32","8","22","0.00","100","1.60","2.30","5.50","0.10","1.00","0.60","12","0","1","0","0","0","1.00"
==PROF== Disconnected from process 4740
"""


PERMISSION_LOG = """\
==PROF== Connected to process 5123 (/work/main/build-student/bin/reduce_lab_runner)
==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance \
Counters on the target device 0. For instructions on enabling permissions and to get more \
information see https://developer.nvidia.com/ERR_NVGPUCTRPERM
==PROF== Disconnected from process 5123
"""


def call(text):
    """The first whole call of a recorded page."""
    return diagnose.first_call(diagnose.parse_raw_csv(text), N)


def keys(symptoms):
    """The LESSONS keys of \\p symptoms."""
    return [s.key for s in symptoms]


class ParseTest(unittest.TestCase):
    def test_rows_units_and_thousands(self):
        kernels = diagnose.parse_raw_csv(STRIDED)
        self.assertEqual(len(kernels), 8)
        first = kernels[0]
        self.assertEqual(first.name,
                         "void reduce_strided<256u>(const float *, unsigned long, float *)")
        self.assertEqual(first.grid, "(1048569, 1, 1)")
        self.assertEqual(first.block, "(256, 1, 1)")
        self.assertEqual(first.get(diagnose.DURATION), 1472000.0)  # nsecond: kept as ns
        self.assertEqual(first.get(diagnose.DRAM_READ), 1073750016.0)
        self.assertAlmostEqual(first.get(diagnose.DRAM_PCT), 17.6)
        self.assertEqual(first.get(diagnose.stall_metric("short_scoreboard")), 9.4)

    def test_prof_lines_and_missing_values(self):
        kernels = diagnose.parse_raw_csv(SLOW)
        self.assertEqual(len(kernels), 6)
        self.assertIsNone(kernels[2].get(diagnose.DRAM_PCT))  # "n/a"
        self.assertEqual(kernels[2].block, "(32, 1, 1)")
        self.assertIsNone(kernels[0].get("no__such_metric.sum"))

    def test_units_scale_to_base(self):
        self.assertEqual(diagnose.number("1.5", "usecond"), 1500.0)
        self.assertEqual(diagnose.number("2", "Kbyte"), 2000.0)
        self.assertIsNone(diagnose.number("n/a", "byte"))

    def test_no_table(self):
        self.assertEqual(diagnose.parse_raw_csv("==PROF== No kernels were profiled.\n"), [])
        self.assertEqual(diagnose.parse_raw_csv(""), [])


class PeriodTest(unittest.TestCase):
    def test_calls_found(self):
        self.assertEqual(diagnose.find_period(diagnose.parse_raw_csv(STRIDED)), (0, 4))
        self.assertEqual(diagnose.find_period(diagnose.parse_raw_csv(STREAMING)), (0, 2))
        self.assertEqual(diagnose.find_period(diagnose.parse_raw_csv(SLOW)), (0, 3))

    def test_set_up_kernel_and_no_repeat(self):
        kernels = diagnose.parse_raw_csv(STREAMING)
        setup = diagnose.Kernel("init_kernel()", "(1, 1, 1)", "(32, 1, 1)")
        self.assertEqual(diagnose.find_period([setup] + kernels), (1, 2))
        strided = diagnose.parse_raw_csv(STRIDED)[:4]  # one call of four launches: no repeat
        self.assertIsNone(diagnose.find_period(strided))
        partial = diagnose.first_call(strided, N)
        self.assertFalse(partial.complete)
        self.assertEqual(diagnose.launches_text(partial), "4+")

    def test_figures_of_one_call(self):
        c = call(STRIDED)
        self.assertEqual(c.launches, 4)
        f = c.figures
        self.assertAlmostEqual(f["time_us"], 1487.04)
        self.assertAlmostEqual(f["conflicts_per_load"], 2.9167, places=3)
        self.assertAlmostEqual(f["conflicts_per_store"], 1.75, places=2)
        self.assertAlmostEqual(f["dram_bytes_per_element"], 4.0, places=1)
        self.assertAlmostEqual(f["bytes_per_load"], 128.0, places=0)
        self.assertAlmostEqual(f["inst_per_element"], 40.2, places=1)
        self.assertEqual(f["limit"], ("warps per SM", 8.0))
        self.assertEqual(diagnose.top_stall(c),
                         ("short_scoreboard", f["stalls"]["short_scoreboard"]))
        self.assertEqual(f["atomics"], 0)


class DiagnosisTest(unittest.TestCase):
    def test_bank_conflicted_tree(self):
        symptoms = diagnose.diagnose(call(STRIDED), call(SEQUENTIAL), diagnose.Context(lab=4))
        self.assertEqual(keys(symptoms), ["bank_conflicts", "stall_shared"])
        self.assertIn("bank conflicts: 2.9 per shared load where the reference has 0.0",
                      symptoms[0].text)
        self.assertIn("1.8 per shared store", symptoms[0].text)
        self.assertIn("short scoreboard", symptoms[1].text)
        text = diagnose.format_diagnosis(symptoms, 4, True)
        self.assertIn('lesson 03, "Shared-memory banks" (labs/03_interleaved_strided/README.md)',
                      text)
        self.assertNotIn("lesson 09", text)  # a later lesson only where no earlier one treats it
        self.assertEqual(diagnose.time_line(call(STRIDED), call(SEQUENTIAL)),
                         "Your call's kernels take 1.28 times as long as the reference's "
                         "(1487.0 against 1165.8 us under ncu).")
        self.assertEqual(diagnose.time_line(call(STRIDED), None), "")

    def test_slow_streaming_read(self):
        symptoms = diagnose.diagnose(call(SLOW), call(STREAMING), diagnose.Context(lab=9))
        found = keys(symptoms)
        for key in ("launches", "dram", "occupancy", "stall_long_scoreboard"):
            self.assertIn(key, found)
        self.assertNotIn("bank_conflicts", found)
        texts = "\n".join(s.text for s in symptoms)
        self.assertIn("3 launches per call where the reference uses 2", texts)
        self.assertIn("DRAM throughput 36% of peak while the reference reaches 90%", texts)
        self.assertIn("achieved occupancy 23% (the grid fills 0.24 of one wave of the GPU) "
                      "where the reference reaches 84%", texts)
        self.assertIn('lesson 08, "Fixed grid sizes, and what really limits a grid-stride loop"',
                      diagnose.format_diagnosis(symptoms, 9, True))

    def test_streaming_and_tree_symptoms_differ(self):
        tree = keys(diagnose.diagnose(call(STRIDED), call(SEQUENTIAL), diagnose.Context(lab=4)))
        stream = keys(diagnose.diagnose(call(SLOW), call(STREAMING), diagnose.Context(lab=9)))
        self.assertNotIn("dram", tree)
        self.assertFalse(set(tree) & {"launches", "occupancy"})
        self.assertFalse(set(stream) & {"bank_conflicts", "stall_shared"})

    def test_as_fast_as_the_reference(self):
        symptoms = diagnose.diagnose(call(STREAMING), call(STREAMING), diagnose.Context(lab=9))
        self.assertEqual(symptoms, [])
        self.assertIn("No symptom stands out beside the reference",
                      diagnose.format_diagnosis(symptoms, 9, True))

    def test_without_a_reference(self):
        streaming = diagnose.Context(lab=9, streaming=True)
        found = keys(diagnose.diagnose(call(SLOW), None, streaming))
        self.assertIn("dram", found)
        self.assertIn("occupancy", found)
        self.assertNotIn("launches", found)  # three launches alone prove nothing
        tree = keys(diagnose.diagnose(call(SEQUENTIAL), None, diagnose.Context(lab=4)))
        self.assertNotIn("dram", tree)  # lab 04 is not graded against the memory's speed

    def test_more_launches_than_profiled(self):
        four = diagnose.first_call(diagnose.parse_raw_csv(STRIDED)[:4], N)
        one_pass = diagnose.first_call(diagnose.parse_raw_csv(STREAMING)[:1] * 3, N)
        text = diagnose.launches_rule(four, one_pass, diagnose.Context(lab=9))
        self.assertEqual(text, "at least 4 launches per call where the reference uses 1")

    def test_table(self):
        table = diagnose.format_table(call(SLOW), call(STREAMING))
        self.assertRegex(table, r"launches per call\s+3\s+2")
        self.assertRegex(table, r"DRAM throughput \(% of peak\)\s+36\.0\s+90\.2")
        self.assertRegex(table, r"grid x block, longest kernel\s+256 x 256\s+1056 x 256")
        self.assertRegex(table, r"stall cycles per instruction: long scoreboard\s+41\.30\s+24\.60")
        alone = diagnose.format_table(call(SLOW), None)
        self.assertNotIn("reference", alone)


class MessagesTest(unittest.TestCase):
    def test_permission(self):
        self.assertTrue(diagnose.permission_denied(PERMISSION_LOG))
        self.assertFalse(diagnose.permission_denied(SLOW))
        text = diagnose.permission_help("04", "build-student")
        self.assertIn("ERR_NVGPUCTRPERM", text)
        self.assertIn("https://developer.nvidia.com/ERR_NVGPUCTRPERM", text)
        self.assertIn("sudo modprobe nvidia NVreg_RestrictProfilingToAdminUsers=0", text)
        self.assertIn("options nvidia NVreg_RestrictProfilingToAdminUsers=0", text)
        self.assertIn('sudo env "PATH=$PATH" tools/profile 04', text)
        self.assertIn("tools/ladder -B build-student -t labs -r 04 -s 2^28", text)
        # Lab 17's rows are a segmented family, and the tree is the one profiled.
        text = diagnose.permission_help("17", "build-p", "submission", "segmented_softmax_32")
        self.assertIn("tools/ladder -B build-p -t submission -o segmented_softmax_32 -r 17 "
                      "-s 2^28", text)
        self.assertIn("tools/ladder -o segmented_softmax_32 -r 17 -s 2^28", text)

    def test_ncu_missing_and_no_gpu(self):
        self.assertIn("nsight-compute", diagnose.ncu_missing_help("04"))
        self.assertIn("Where to get a GPU", diagnose.NO_GPU)


class LessonMapTest(unittest.TestCase):
    def test_every_section_exists(self):
        for key, entries in diagnose.LESSONS.items():
            for folder, heading in entries:
                readme = ROOT / "labs" / folder / "README.md"
                self.assertTrue(readme.is_file(), f"{key}: no {readme}")
                headings = re.findall(r"^#{1,4} (.+?)\s*$", readme.read_text(), re.M)
                self.assertIn(heading, headings, f"{key}: {readme} has no heading {heading!r}")

    def test_every_symptom_has_lessons(self):
        for key, _ in diagnose.RULES:
            if key != "stall":
                self.assertIn(key, diagnose.LESSONS)
        for key in list(diagnose.STALL_LESSONS.values()) + ["stall_other"]:
            self.assertIn(key, diagnose.LESSONS)

    def test_own_lesson_first_then_earlier_ones(self):
        self.assertEqual(diagnose.lessons_for("launches", 15)[0],
                         ("15_capstone", "4. One launch or two"))
        self.assertEqual(diagnose.lessons_for("bank_conflicts", 3),
                         [("03_interleaved_strided", "Shared-memory banks"),
                          ("03_interleaved_strided", "The padding remedy")])
        self.assertEqual(diagnose.lessons_for("dram", 2),  # no earlier lesson: the first one
                         [("08_many_per_thread",
                           "What changed from rung 7, and why it should be faster")])


class PlanTest(unittest.TestCase):
    def test_sizes(self):
        self.assertEqual(plan.parse_size("2^28"), 268435456)
        self.assertEqual(plan.parse_size("2^28-2047"), N)
        self.assertEqual(plan.parse_size("1000"), 1000)
        self.assertRaises(ValueError, plan.parse_size, "lots")
        n, note = plan.graded_size("2^28")
        self.assertEqual(n, N)
        self.assertIn("1 to 4093", note)

    def test_rubric(self):
        size, measures = plan.read_rubric((ROOT / "autograder" / "rubric.toml").read_text())
        self.assertEqual(size, "2^28")
        self.assertEqual(measures["04_sequential"], "reference")
        self.assertEqual(measures["09_warp_shuffle"], "probe")
        self.assertEqual(plan.read_rubric_lines('[performance]\nsize = "2^26"  # x\n'
                                                '[labs.04_sequential]\nmeasure = "reference"\n'
                                                '[labs.04_sequential.points]\ntests = 1\n'),
                         ("2^26", {"04_sequential": "reference"}))

    def test_entry_family_and_filter(self):
        course = json.loads((ROOT / "course.json").read_text())
        manifest = {"trees": {"labs": [
            {"lab": "14_atomic_max", "op": "atomic_max", "library": "a.so", "bench_name": "14"},
            {"lab": "14_atomic_max", "op": "maximum", "library": "m.so", "bench_name": "14"},
            {"lab": "17_segmented", "op": "segmented_sum", "library": "s.so",
             "bench_name": "17_segmented"},
            {"lab": "17_segmented", "op": "segmented_softmax", "library": "x.so",
             "bench_name": "17_segmented"}]}}
        self.assertEqual(plan.find_entry(manifest, "labs", "14", "", course)["op"], "maximum")
        with self.assertRaisesRegex(ValueError, "not benchmarked"):
            plan.find_entry(manifest, "labs", "14", "atomic_max", course)
        with self.assertRaisesRegex(ValueError, "no tree 'solutions'"):
            plan.find_entry(manifest, "solutions", "14", "", course)
        self.assertEqual(plan.family(course, "segmented_sum", 1024), "segmented_sum_1024")
        # Lab 17: its first operation by default, the other by --op, each its own family.
        self.assertEqual(plan.find_entry(manifest, "labs", "17", "", course)["op"],
                         "segmented_sum")
        softmax = plan.find_entry(manifest, "labs", "17", "segmented_softmax", course)
        self.assertEqual(softmax["library"], "x.so")
        self.assertEqual(plan.row_filter(plan.family(course, "segmented_softmax", 32),
                                         softmax["bench_name"], N),
                         f"--benchmark_filter=^segmented_softmax_32/17_segmented/{N}(/|$)")
        self.assertEqual(plan.family(course, "sum_deterministic", 1024), "sum")
        self.assertEqual(plan.row_filter("sum", "04_sequential", N),
                         f"--benchmark_filter=^sum/04_sequential/{N}(/|$)")

    def test_environment_and_ncu(self):
        words = plan.ncu_words("/x/ncu", 10, ["a.sum", "b.ratio"], "r.ncu-rep", "n.log")
        self.assertEqual(words[:6], ["/x/ncu", "--nvtx", "--nvtx-include", "lab-call/",
                                     "--launch-count", "10"])
        self.assertNotIn("--target-processes", words)
        self.assertIn("a.sum,b.ratio", words)
        entry = {"bench_name": "04_sequential", "library": "/b/lib04.so"}
        self.assertEqual(plan.labs_line(entry), "04_sequential=/b/lib04.so\n")
        env = plan.bench_environment({"REDUCE_LAUNCH_SPEC": "x", "REDUCE_LABS": "y",
                                      "PATH": "/bin"},
                                     "/o/yours.labs.txt", N, 1024)
        for gone in ("REDUCE_LAUNCH_SPEC", "REDUCE_LABS"):
            self.assertNotIn(gone, env)
        self.assertEqual(env["PATH"], "/bin")
        self.assertEqual(env["REDUCE_LABS_FILE"], "/o/yours.labs.txt")
        self.assertEqual(env["REDUCE_BENCH_SIZES"], str(N))

    def test_available_metrics(self):
        listing = "Device NVIDIA H200 (GH100)\n" + "\n".join(
            f"{m.split('.')[0]}   what it counts" for m in diagnose.METRICS[1:]) + "\n" + \
            "\n".join(f"filler__metric_{i}   more" for i in range(100))
        kept, dropped = plan.available_metrics(listing, diagnose.METRICS)
        self.assertEqual(dropped, [])  # the duration is always asked for
        listing = listing.replace("dram__throughput ", "dram__other ")
        kept, dropped = plan.available_metrics(listing, diagnose.METRICS)
        self.assertEqual(dropped, [diagnose.DRAM_PCT])
        self.assertEqual(plan.available_metrics("==ERROR== no device", ["x.sum"]), (["x.sum"], []))


FAKE_NCU = """\
#!/usr/bin/env python3
# A stand-in for ncu: lists metrics, "profiles" the command after its options by running it and
# copying a recorded page, imports it back.
import os, pathlib, shutil, subprocess, sys
args = sys.argv[1:]
here = pathlib.Path(__file__).parent
with open(here / "calls.log", "a") as log:
    log.write("ncu " + repr(args) + "\\n")
denied = "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission\\n"
if args[:1] == ["--query-metrics"]:
    print(denied if os.environ.get("FAKE_DENY") == "query" else (here / "listing.txt").read_text())
    sys.exit(1 if os.environ.get("FAKE_DENY") == "query" else 0)
if args[:1] == ["--import"]:
    print(pathlib.Path(args[1]).read_text())
    sys.exit(0)
command = args[args.index("--log-file") + 2:]
side = "reference" if "/solutions/" in pathlib.Path(os.environ["REDUCE_LABS_FILE"]).read_text() \\
    else "yours"
denying = os.environ.get("FAKE_DENY") == "profile"
pathlib.Path(args[args.index("--log-file") + 1]).write_text(
    "==PROF== Connected to process 4711\\n" + (denied if denying else ""))
status = subprocess.run(command).returncode
if not denying and status == 0:
    shutil.copy(here / (side + ".csv"), args[args.index("--export") + 1])
sys.exit(status)
"""

FAKE_BENCH = """\
#!/usr/bin/env python3
# A stand-in for reduce_bench: loads the labs of REDUCE_LABS_FILE into its own process.
import os, pathlib, sys
here = pathlib.Path(__file__).parent
labs = pathlib.Path(os.environ["REDUCE_LABS_FILE"]).read_text().strip()
with open(here / "calls.log", "a") as log:
    log.write("bench " + repr(sys.argv[1:]) + " " + labs + " "
              + repr(os.environ.get("REDUCE_LAUNCH_SPEC")) + "\\n")
if os.environ.get("FAKE_STUB"):
    print("sum/04_sequential/1  ERROR: not implemented: see labs/04_sequential/sum.cu")
    sys.exit(1)
"""

FAKE_SMI = """\
#!/bin/sh
if [ "$1" = -L ]; then echo "GPU 0: NVIDIA H200 (UUID: GPU-0)"; else echo "NVIDIA H200"; fi
"""


class ScriptTest(unittest.TestCase):
    """tools/profile end to end, with stand-ins for ncu, the benchmark and nvidia-smi."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        base = pathlib.Path(self.tmp.name)
        self.bin, self.build = base / "bin", base / "build"
        self.bin.mkdir()
        self.build.mkdir()
        for name, text in (("ncu", FAKE_NCU), ("reduce_bench", FAKE_BENCH),
                           ("nvidia-smi", FAKE_SMI)):
            (self.bin / name).write_text(text)
            (self.bin / name).chmod(0o755)
        (self.bin / "yours.csv").write_text(STRIDED)
        (self.bin / "reference.csv").write_text(SEQUENTIAL)
        (self.bin / "listing.txt").write_text("Device NVIDIA H200 (GH100)\n" + "\n".join(
            f"{m.split('.')[0]}  counts"
            for m in diagnose.METRICS + [f"x__y{i}" for i in range(99)]))
        self.write_manifest(solutions=True)

    def tearDown(self):
        self.tmp.cleanup()

    def write_manifest(self, solutions):
        """A course-manifest.json of lab 04 in labs/ (and solutions/) with the stand-ins."""
        def entry(tree):
            """Lab 04's entry in \\p tree."""
            return {"lab": "04_sequential", "op": "sum", "bench_name": "04_sequential",
                    "library": f"/course/build/{tree}/lib/lib04_sequential_sum.so"}
        trees = {"labs": [entry("labs")]}
        if solutions:
            trees["solutions"] = [entry("solutions")]
        manifest = {"bench": str(self.bin / "reduce_bench"), "runner": "/bin/true",
                    "operations": {"sum": {"entry": "sum"}}, "trees": trees}
        (self.build / "course-manifest.json").write_text(json.dumps(manifest))

    def run_profile(self, *extra, **env):
        """tools/profile 04 on the stand-ins, with \\p extra arguments and \\p env."""
        environment = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
        environment.update({"PATH": f"{self.bin}:{os.environ.get('PATH', '')}",
                            "NCU": str(self.bin / "ncu"), **env})
        return subprocess.run([sys.executable, str(ROOT / "tools" / "profile"), "04", "-B",
                               str(self.build), "--no-build", "--reference-build",
                               str(self.build / "none"), *extra],
                              capture_output=True, text=True, env=environment, timeout=120)

    def calls(self):
        """What the stand-in ncu and benchmark were asked to do."""
        return (self.bin / "calls.log").read_text()

    def test_yours_beside_the_reference(self):
        out = self.run_profile()
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn(f"lab 04_sequential, operation sum, n = {N}", out.stdout)
        self.assertIn("reference: solutions/04_sequential", out.stdout)
        self.assertIn("NVIDIA H200", out.stdout)
        self.assertIn("bank conflicts: 2.9 per shared load where the reference has 0.0", out.stdout)
        self.assertIn('lesson 03, "Shared-memory banks"', out.stdout)
        self.assertRegex(out.stdout, r"launches per call\s+4\s+4")
        calls = self.calls()
        self.assertIn(f"--benchmark_filter=^sum/04_sequential/{N}(/|$)", calls)
        self.assertIn("04_sequential=/course/build/labs/lib/lib04_sequential_sum.so None", calls)
        self.assertIn("04_sequential=/course/build/solutions/lib/lib04_sequential_sum.so None",
                      calls)
        self.assertIn("'--launch-count', '10'", calls)
        self.assertIn("'--nvtx', '--nvtx-include', 'lab-call/'", calls)
        self.assertNotIn("--target-processes", calls)
        self.assertIn("'--page', 'raw'", calls)
        folder = self.build / "profile" / "04_sequential_sum"
        self.assertEqual((folder / "yours.csv").read_text().strip(), STRIDED.strip())
        self.assertTrue((folder / "reference.ncu-rep").is_file())

    def test_alone_without_solutions(self):
        self.write_manifest(solutions=False)
        out = self.run_profile("--launches", "6", "--raw")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("reference: none (no build here has solutions/ built", out.stdout)
        self.assertIn("'--launch-count', '6'", self.calls())
        self.assertIn("reduce_strided<256u>", out.stdout)  # --raw: the page itself

    def test_counters_not_allowed(self):
        for when in ("query", "profile"):
            out = self.run_profile(FAKE_DENY=when)
            self.assertEqual(out.returncode, 1, when)
            self.assertIn("NVreg_RestrictProfilingToAdminUsers=0", out.stderr)
            self.assertIn("tools/ladder", out.stderr)

    def test_untouched_stub(self):
        out = self.run_profile(FAKE_STUB="1")
        self.assertEqual(out.returncode, 1)
        self.assertIn("still the untouched stub", out.stderr)

    def test_no_gpu_and_no_ncu(self):
        out = self.run_profile(CUDA_VISIBLE_DEVICES="")
        self.assertEqual(out.returncode, 77)
        self.assertIn("no NVIDIA GPU here", out.stderr)
        out = self.run_profile(NCU=str(self.bin / "absent"))
        self.assertEqual(out.returncode, 2)
        self.assertIn("Nsight Compute", out.stderr)

    def test_lab_test_forwards(self):
        environment = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
        environment.update({"PATH": f"{self.bin}:{os.environ.get('PATH', '')}",
                            "NCU": str(self.bin / "ncu")})
        out = subprocess.run([str(ROOT / "tools" / "lab-test"), "4", "--profile", "-B",
                              str(self.build), "--no-build", "--", "--reference-build",
                              str(self.build / "none"), "--size", "2^20"],
                             capture_output=True, text=True, env=environment, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("n = 1048576 (--size)", out.stdout)

    def test_usage(self):
        out = self.run_profile("--size", "lots")
        self.assertEqual(out.returncode, 2)
        self.assertIn("not a size", out.stderr)


if __name__ == "__main__":
    unittest.main()
