"""The table and figure the peer benchmarks (cpu_peers.py, gpu_peers.py) print and draw: each
contender's median all_reduce time and bus bandwidth per size, and its time over pycoll's."""
from pycoll.bench.collectives import OPS


def size_text(nbytes):
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if nbytes >= 1 << shift:
            return f"{nbytes >> shift} {unit}"
    return f"{nbytes} B"


def table(results, world):
    """Markdown lines from ``results`` ({size: {contender: median seconds}}, pycoll first)."""
    names = list(next(iter(results.values())))
    factor = OPS["all_reduce"].busbw_factor(world)
    lines = ["| size | " + " | ".join(f"{n} (us) | {n} busbw (GB/s)" for n in names) + " | "
             + " | ".join(f"{n} / pycoll" for n in names[1:]) + " |",
             "|---:" * (1 + 2 * len(names) + len(names) - 1) + "|"]
    for nbytes, med in results.items():
        cells = [f"{med[n] * 1e6:.1f} | {nbytes * factor / med[n] / 1e9:.2f}" for n in names]
        ratios = [f"{med[n] / med['pycoll']:.2f}" for n in names[1:]]
        lines.append(f"| {size_text(nbytes)} | " + " | ".join(cells + ratios) + " |")
    return lines


def plot(results, world, title, path):
    """A PNG at ``path``: each contender's bus bandwidth against message size."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    factor = OPS["all_reduce"].busbw_factor(world)
    fig, ax = plt.subplots(figsize=(7, 4))
    for n in next(iter(results.values())):
        ax.plot(list(results), [b * factor / results[b][n] / 1e9 for b in results], marker="o", label=n)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("bus bandwidth (GB/s)")
    ax.set_title(title)
    ax.legend()
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
