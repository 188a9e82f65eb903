"""The table and figure the peer benchmarks (cpu_peers.py, gpu_peers.py) print and draw: each
contender's median time and bus bandwidth per size for one collective, and its time over
pycoll's. Bus bandwidth uses nccl-tests' factor of the collective (pycoll-bench's registry).
Sizes read in B/KiB/MiB/GiB (``size_text``, pycoll-bench's). ``SIZES`` and ``iterations`` are
the sweep the CPU all_reduce comparisons share (allreduce_vs_mpi4py.py, check_cost.py)."""
from pycoll.bench.collectives import OPS
from pycoll.bench.report import size_text

__all__ = ["SIZES", "iterations", "plot", "plot_ops", "size_text", "table"]

SIZES = [1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24, 1 << 26]


def iterations(nbytes):
    """Calls per timed block at ``nbytes``: about 160 MiB moved, 3 to 2000 calls."""
    return max(3, min(2000, (4 << 20) // nbytes * 40))


def _busbw(op, world, nbytes, seconds):
    return nbytes * OPS[op].busbw_factor(world) / seconds / 1e9


def table(results, world, op="all_reduce"):
    """Markdown lines from ``results`` ({size: {contender: median seconds}}, pycoll first) of
    ``op`` on ``world`` ranks."""
    names = list(next(iter(results.values())))
    lines = ["| size | " + " | ".join(f"{n} (us) | {n} busbw (GB/s)" for n in names) + " | "
             + " | ".join(f"{n} / pycoll" for n in names[1:]) + " |",
             "|---:" * (1 + 2 * len(names) + len(names) - 1) + "|"]
    for nbytes, med in results.items():
        cells = [f"{med[n] * 1e6:.1f} | {_busbw(op, world, nbytes, med[n]):.2f}" for n in names]
        ratios = [f"{med[n] / med['pycoll']:.2f}" for n in names[1:]]
        lines.append(f"| {size_text(nbytes)} | " + " | ".join(cells + ratios) + " |")
    return lines


def plot_ops(by_op, world, title, path):
    """A PNG at ``path``: one panel per collective of ``by_op`` ({op: results as
    :func:`table` takes them}), each contender's bus bandwidth against message size."""
    from pycoll.bench.plot import pyplot, size_axis

    plt = pyplot()
    fig, axes = plt.subplots(1, len(by_op), figsize=(7 * len(by_op), 4), squeeze=False)
    for ax, (op, results) in zip(axes[0], by_op.items()):
        for n in next(iter(results.values())):
            ax.plot(list(results), [_busbw(op, world, b, results[b][n]) for b in results],
                    marker="o", label=n)
        size_axis(ax)
        ax.set_ylabel("bus bandwidth (GB/s)")
        ax.set_title(op)
        ax.legend()
        ax.grid(True, alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot(results, world, title, path, op="all_reduce"):
    """:func:`plot_ops` for one collective."""
    plot_ops({op: results}, world, title, path)
