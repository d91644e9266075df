// Every threshold of the model layer (steps, collective matching, clock and recording alignment), in one
// place, with what it decides and why it has its value. The diagnosis's own thresholds are in
// src/analysis/diagnosis/thresholds.h; the model sits below analysis (tests/cli/check_include_graph.py), so
// its thresholds live here, one place per layer, and that file points here.
// Frozen with thresholds.h before an accuracy measurement (docs/accuracy.md): a change here changes the
// steps and alignments the diagnosis judges. Constants of a method (a convergence tolerance, a cap on the
// work done) are not thresholds and stay with their method.
#pragma once

#include <cstddef>
#include <cstdint>

namespace strata::model::thresholds {

// ---- clocks (clock_alignment.h; status) ----------------------------------------------------------------
/// Timestamps at or above this (ns since 1970, i.e. after 2001) are epoch-based: host clocks, equal on one
/// host and within NTP's milliseconds across hosts, so comparable across files without alignment.
inline constexpr double kEpochFloorNs = 1e18;

// ---- step rhythm (step_rhythm.h) ----------------------------------------------------------------------
/// The longest step, in collective calls, that the rhythm search tries (a DDP step has a few gradient
/// buckets; pipeline and tensor-parallel steps some tens).
inline constexpr size_t kRhythmMaxPeriod = 64;
/// A rhythm needs at least this many whole steps: fewer cannot show that the boundary gaps repeat.
inline constexpr size_t kRhythmMinSteps = 3;
/// The boundary gap must be the largest of its step in at least this share of the steps (a data-loading
/// hiccup inside a step may exceed it now and then).
inline constexpr double kRhythmMinConsistency = 0.8;
/// ... and the boundary gaps' median must be this multiple of the median largest other gap of the step:
/// a multiple of the true period puts a real boundary among the "other" gaps and fails it.
inline constexpr double kRhythmMinSeparation = 3.0;
/// One call per step (period 1) only when the calls are spaced regularly: the gaps' interquartile range
/// within this share of their median.
inline constexpr double kRhythmRegularIqrShare = 0.5;

// ---- collective matching (collectives.cc, CallShift) ---------------------------------------------------
/// A rank's call indices are shifted against the reference rank's (a rank whose recording began a call
/// later) only when the shift cuts the spread (MAD) of the end-time differences to this share of the
/// unshifted spread: collectives end together, so the right shift makes the differences a constant.
inline constexpr double kCallShiftSpreadShare = 0.5;
/// The spread is judged on at least this many call pairs and at least kCallShiftMinPeriods steps' calls.
inline constexpr size_t kCallShiftMinPairs = 4;
inline constexpr size_t kCallShiftMinPeriods = 2;

// ---- recording alignment (recording_alignment.h) --------------------------------------------------------
/// A matched (traced, recorded) collective pair agrees with a shift when its offset is within this many ns
/// of the shift's median offset (the recorder's and the profiler's timestamps of one call differ by the
/// probe and launch latencies, well under 2 ms, unless the thread is preempted between them).
inline constexpr int64_t kMaxAlignmentSpreadNs = 2'000'000;
/// An alignment is taken only when at least this share of the matched pairs agree with it. Not 0.9: on a
/// crowded machine (lab jobs of 4 and 8 ranks on 2 cores, kept jobs of 2026-12-05) a rank's thread is preempted
/// between the probe and the profiler's stamp in 1-4 of its 12-18 calls; 29 of 216 recorded jobs had a rank
/// refused at 0.9 with 14-16 of 18 pairs agreeing, while every other shift had at most 10 of 18 (5 of 12) and a
/// total deviation 4-600x the best's. A wrong shift of a regular loop is what the ambiguity test below refuses.
inline constexpr double kAlignmentMinAgreeShare = 0.75;
/// ... and refused as ambiguous when another shift also has that share agreeing and its total deviation is
/// within this multiple of the best's plus kAmbiguousTotalSlackNs (a perfectly regular loop matches itself
/// shifted by whole steps).
inline constexpr double kAmbiguousTotalRatio = 1.5;
inline constexpr int64_t kAmbiguousTotalSlackNs = 100'000;

// ---- collective progress (collective_progress.h, AlignByCompletion) -----------------------------------
/// A recording that began mid-run numbers each rank's collectives from where it began; a rank's numbers are
/// shifted onto the reference rank's by the shift whose completions line up best. The shift is certain
/// (ops at one number may then be compared across ranks: a mismatch) only when it pairs at least this many
/// completed calls ...
inline constexpr size_t kSeqAlignMinPairs = 4;
/// ... and every other shift tried either disagrees on more ops or has a median |completion difference|
/// beyond this multiple of the best's plus kSeqAlignSlackNs (collectives of one number complete within the
/// ranks' skew, tens of microseconds on one host and the clocks' offset across hosts; neighbouring ones a
/// gap between collectives apart).
inline constexpr double kSeqAlignAmbiguousRatio = 2.0;
inline constexpr int64_t kSeqAlignSlackNs = 100'000;

}  // namespace strata::model::thresholds
