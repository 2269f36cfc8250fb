"""make run's banner says what answers the AI operations in this run, and how to read a seeding job."""

from __future__ import annotations

from types import SimpleNamespace

from local.banner import _SAMPLE_NOTES, _ai_note


def runner(*, local_model: bool = False, key: str = "") -> SimpleNamespace:
    model = SimpleNamespace(base_url="http://127.0.0.1:40975") if local_model else None
    return SimpleNamespace(local_model=model, settings=SimpleNamespace(values={"ANTHROPIC_API_KEY": key}))


def test_with_the_local_model_the_banner_says_it_answers() -> None:
    assert _ai_note(runner(local_model=True, key="local-model-key")) == (
        "the local model answers (SVC_AI_PROVIDER=local, http://127.0.0.1:40975)"
    )


def test_with_a_key_the_banner_says_the_provider_answers() -> None:
    assert _ai_note(runner(key="sk-...")) == "the AI provider answers (ANTHROPIC_API_KEY is set)"


def test_without_either_the_banner_says_what_to_set() -> None:
    note = _ai_note(runner())

    assert note.startswith("503 until the AI is set")
    assert "SVC_AI_PROVIDER=local make run" in note
    assert "ANTHROPIC_API_KEY" in note


def test_the_seeding_note_shows_how_to_read_a_job_once_formatted() -> None:
    note = _SAMPLE_NOTES["seedTemplates"].format(linked="alice")

    assert """-d '{"job_id": "tj_..."}'""" in note
