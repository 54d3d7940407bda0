"""Percentiles of measured samples for the Python benches: the standard
library's quantiles with linear interpolation between order statistics (as
numpy's default, and bench/sample_stats.h for the C++ benches)."""
import statistics


def percentile(values, q):
    """The q-th percentile (0..100) of `values`; nan when there are none."""
    values = sorted(values)
    if not values:
        return float("nan")
    if q <= 0 or len(values) == 1:
        return float(values[0])
    if q >= 100:
        return float(values[-1])
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]
