"""The chunk-size histogram is built from plain dicts (no validation, for speed): it must still be a valid figure."""

from __future__ import annotations

import plotly.graph_objects as go
import pytest

from ui.charts import size_histogram


@pytest.mark.parametrize(
    ("sizes", "limit"),
    [([120, 300, 300, 990], 1000), ({"recursive": [100, 200], "sentence": [150, 260, 90]}, None), ([], 256)],
)
def test_size_histogram_is_a_valid_plotly_figure(sizes, limit):
    figure = size_histogram(sizes, limit=limit, unit="tokens")
    validated = go.Figure(figure.to_dict())  # raises on any property plotly does not know
    assert [trace.type for trace in validated.data] == ["histogram"] * (len(sizes) if isinstance(sizes, dict) else 1)
    assert validated.layout.xaxis.title.text == "size in tokens"
    assert validated.layout.template.layout.plot_bgcolor == "white"  # plotly_white, resolved


def test_the_size_limit_is_a_labelled_dashed_line():
    layout = size_histogram([10, 20], limit=1000).to_dict()["layout"]
    (line,) = layout["shapes"]
    assert (line["x0"], line["x1"], line["line"]["dash"]) == (1000, 1000, "dash")
    assert layout["annotations"][0]["text"] == "chunk size limit: 1,000"
    assert "shapes" not in size_histogram([10, 20]).to_dict()["layout"]


def test_overlaid_series_share_bins_and_show_a_legend():
    figure = size_histogram({"a": [1, 5, 9], "b": [2, 30]}).to_dict()
    first, second = figure["data"]
    assert first["xbins"] == second["xbins"]
    assert figure["layout"]["showlegend"] is True


def test_one_node_draws_a_readable_axis_and_whole_counts() -> None:
    layout = size_histogram([25_927], limit=1000).to_plotly_json()["layout"]
    assert layout["xaxis"]["tickformat"] == ",d" and layout["yaxis"]["tickformat"] == ",d"
    assert layout["yaxis"]["dtick"] == 1
    low, high = layout["xaxis"]["range"]
    assert low < 25_927 < high and high - low >= 20


def test_evaluate_charts_put_their_legend_below_the_plot_clear_of_the_toolbar() -> None:
    # At the top right (y above 1) a legend lies under plotly's toolbar; below the x axis nothing covers it.
    from ui.evaluate_results import hit_curve_figure

    rows = [{"config": "256/0", "hit_curve": [0.4, 0.6, 0.7]}, {"config": "512/50", "hit_curve": [0.5, 0.7, 0.8]}]
    curve = hit_curve_figure(rows).to_plotly_json()["layout"]["legend"]
    assert (curve["yanchor"], curve["xanchor"]) == ("top", "left") and curve["y"] < -0.15  # under the axis title
    go.Figure(hit_curve_figure(rows).to_dict())  # still a valid figure
