import gpuplan


def test_all_names_resolve() -> None:
    for name in gpuplan.__all__:
        assert getattr(gpuplan, name) is not None, name


def test_unknown_name_raises() -> None:
    try:
        gpuplan.no_such_thing  # noqa: B018
    except AttributeError as exc:
        assert "no_such_thing" in str(exc)
    else:
        raise AssertionError("expected AttributeError")
