from gpuprof.advice.fixes import hdf5_chunk_cache
from tests.unit.fixes.cases import evidence, situation


def dataset(cache, reopened=False):
    return {"file": "data.h5", "dataset": "/images", "chunks": [64, 32, 32], "chunk_bytes": 65536,
            "rdcc_nbytes": cache, "rdcc_nslots": 521, "read_amplification": 64.0, "chunks_touched": 100,
            "reads": 100, "opens": 100 if reopened else 1, "reopened_per_read": reopened,
            "cache_holds_a_chunk": cache >= 65536}


def test_a_cache_smaller_than_a_chunk_gets_a_cache_of_a_batch_of_chunks():
    built = hdf5_chunk_cache.build(evidence(hdf5=[dataset(1024)]), situation())
    assert built["where"] == "data.h5:/images"
    assert built["change"]["hdf5_cache_bytes"] >= 32 * 65536 and built["change"]["hdf5_keep_handles"] is True
    assert "chunk cache 1024 B ->" in built["detail"] and "cannot hold one" in built["why"]


def test_a_data_set_opened_per_read_is_told_to_keep_its_handle_and_never_x_to_x():
    built = hdf5_chunk_cache.build(evidence(hdf5=[dataset(1 << 30, reopened=True)]), situation())
    assert "keep its handle" in built["detail"] and " B -> " not in built["detail"]
    assert "opened again for each read" in built["why"]
    assert built["change"]["hdf5_cache_bytes"] == 1 << 30


def test_right_cache_and_kept_handle_give_nothing_to_change():
    assert hdf5_chunk_cache.build(evidence(hdf5=[dataset(1 << 30)]), situation()) is None
