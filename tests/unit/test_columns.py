from gpuprof.capture.samplers.columns import LAST, MAX, MEAN, SUM, ColumnStore


def make_store(max_rows=8):
    return ColumnStore({"t": LAST, "bytes": SUM, "share": MEAN, "rss": MAX}, max_rows=max_rows)


def test_rows_are_kept_as_they_come_below_the_bound():
    store = make_store()
    for i in range(5):
        store.append({"t": i, "bytes": 10, "share": 0.5, "rss": i})
    data = store.to_dict()
    assert data["stride"] == 1 and data["ticks"] == 5
    assert data["columns"]["t"] == [0, 1, 2, 3, 4]


def test_long_series_are_downsampled_with_exact_totals():
    store = make_store(max_rows=8)
    for i in range(1000):
        store.append({"t": i, "bytes": 3, "share": 0.25 if i % 2 else 0.75, "rss": i})
    data = store.to_dict()
    columns = data["columns"]
    assert len(columns["t"]) <= 8
    assert data["stride"] >= 128
    assert sum(columns["bytes"]) == 3 * 1000          # counters stay exact
    assert max(columns["rss"]) == 999                  # gauges keep their peak
    assert all(abs(s - 0.5) < 1e-9 for s in columns["share"][:-1])  # shares average
    assert columns["t"][-1] == 999                     # the last timestamp survives


def test_missing_values_do_not_poison_merges():
    store = make_store(max_rows=2)
    store.append({"t": 0, "bytes": None, "share": None, "rss": 1})
    store.append({"t": 1, "bytes": 5, "share": 0.5, "rss": 2})
    store.append({"t": 2, "bytes": 5, "share": 0.5, "rss": 2})
    assert sum(v for v in store.to_dict()["columns"]["bytes"] if v) == 10
