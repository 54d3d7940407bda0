"""The Python benches' plots, drawn by gnuplot (Debian's gnuplot-nox): a
clustered bar chart (one cluster per row, one bar per series), and any other
gnuplot script run the same way.

    from bar_chart import bar_chart, gnuplot
    ok = bar_chart("out.png", "title", "ms (lower is better)",
                   labels=["pace 0", "pace 300"], series={"p50": [471, 156], "p99": [664, 510]})
    ok = gnuplot(script)  # a script that sets its own terminal and output
"""
import os
import subprocess
import sys
import tempfile


def bar_chart(path, title, ylabel, labels, series, logscale=False):
    """Writes the chart; False (and a line on stderr) when gnuplot failed."""
    names = list(series)
    with tempfile.NamedTemporaryFile("w", suffix=".dat", delete=False) as data:
        for i, label in enumerate(labels):
            data.write(f'"{label}" ' + " ".join(f"{series[n][i]:.3f}" for n in names) + "\n")
    plots = ", ".join(f'"{data.name}" using {k + 2}{":xtic(1)" if k == 0 else ""} title "{name}"'
                      for k, name in enumerate(names))
    script = f"""
set terminal pngcairo size 900,500 font ",11" noenhanced
set output "{path}"
set title "{title}"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel "{ylabel}"
{"set logscale y" if logscale else "set yrange [0:*]"}
set grid ytics
set key outside top center horizontal
plot {plots}
"""
    drawn = gnuplot(script)
    os.unlink(data.name)
    return drawn


def gnuplot(script):
    """Runs a gnuplot script; False (and a line on stderr) when gnuplot is missing or failed."""
    try:
        done = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
    except FileNotFoundError:  # a bare host (a GPU host): the table is the result, the plot can be drawn later
        done = None
    if done is None or done.returncode != 0:
        sys.stderr.write("no plot: " + (f"gnuplot failed: {done.stderr.strip()[-1000:]}" if done else
                                        "gnuplot is missing (scripts/setup.sh installs gnuplot-nox)") + "\n")
        return False
    return True
