def test_join_words_lists_for_prose():
    from layerwise.chapter import join_words

    assert [join_words(w) for w in ([], ["a"], ["a", "b"], ["a", "b", "c"])] == [
        "",
        "a",
        "a and b",
        "a, b and c",
    ]


def test_small_tensor_chapters_run_torch_on_one_thread(tmp_path):
    import torch

    from layerwise.chapter import ONE_TORCH_THREAD, Chapter
    from layerwise.runner import chapters

    assert {nb.stem for nb in chapters().values()} >= ONE_TORCH_THREAD  # names of real chapters
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        Chapter("07_meanfield_chaos", scale="ci", seed=0, results=tmp_path)
        assert torch.get_num_threads() == 2  # other chapters keep torch's default
        Chapter("06_linear_regions", scale="ci", seed=0, results=tmp_path)
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
