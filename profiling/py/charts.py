"""Charts for reports/gap.md from the JSON the `report` command writes (matplotlib, SVG)."""

import json
import os
import sys

import matplotlib

matplotlib.use("svg")
import matplotlib.pyplot as plt  # noqa: E402


def barh(path, title, labels, values, xlabel, ref=None):
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(labels) + 1.4))
    y = range(len(labels))
    ax.barh(list(y), values, color="#4a7bb7")
    ax.set_yticks(list(y))
    ax.set_yticklabels(labels)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    if ref is not None:
        ax.axvline(ref, color="#c44", linestyle="--", linewidth=1)
    for i, v in enumerate(values):
        ax.text(v, i, f" {v:.3g}", va="center", fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main():
    data = json.load(open(sys.argv[1]))
    out = sys.argv[2]
    os.makedirs(out, exist_ok=True)
    for chart in data["charts"]:
        barh(
            os.path.join(out, chart["file"]),
            chart["title"],
            chart["labels"],
            chart["values"],
            chart["xlabel"],
            chart.get("ref"),
        )
        print(chart["file"])


if __name__ == "__main__":
    main()
