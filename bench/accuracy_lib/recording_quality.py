"""Whether a lab recording is fit to score: other load on the machine, or a fault that did not take.

Shared by bench/accuracy and tests/recorder/test_record.py, which record a lab job again (a few times) when
this says why not.
"""


def recording_problem(truth):
    """Why a lab recording is not fit to score (other load on the machine), or None."""
    step = truth.get("step_ms_median") or 0.0
    if truth.get("noise_ms", 0.0) > max(1.5, 0.03 * step):
        return f"noisy: a rank other than the fault rank was {truth['noise_ms']:.1f} ms late per step"
    if truth.get("jitter_ms", 0.0) > max(2.5, 0.05 * step):
        return f"noisy: the arrivals of the ranks without the fault spread by {truth['jitter_ms']:.1f} ms in single steps"
    if truth["fault"] != "none" and truth.get("injected_ms", 0.0) < 0.03 * step:
        return f"weak: measured effect {truth.get('injected_ms', 0.0):.1f} ms per step"
    # The effect is measured against two baseline steps; a rank early in those (a noisy baseline) can gain
    # the effect and still arrive with its peers: then there is no straggler to find.
    if (truth["fault"] != "none" and str(truth.get("effect_metric", "")).startswith("lateness")
            and "effect_on_ms" in truth and truth["effect_on_ms"] < 0.03 * step):
        return (f"weak: the fault rank was {truth['effect_on_ms']:.1f} ms late in its fault steps (its effect "
                f"{truth.get('injected_ms', 0.0):.1f} ms is against a baseline of {truth.get('baseline_ms', 0.0):.1f} ms)")
    return None
