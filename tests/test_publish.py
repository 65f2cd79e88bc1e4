"""Publishing the book: ``.github/workflows/book.yml`` (GitHub Pages, Jupyter Book's convention)
builds with the README's command and deploys the folder that command builds. Read, never run:
nothing here contacts the network.
"""

from __future__ import annotations

import re

import yaml

from coursetools.common.layout import REPO_ROOT

WORKFLOW = REPO_ROOT / ".github" / "workflows" / "book.yml"
README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")


def workflow() -> dict:
    loaded = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    loaded["on"] = loaded.pop(True, loaded.get("on"))  # YAML 1.1 reads the key `on` as True
    return loaded


def readme_build() -> tuple[str, str]:
    """(the README's command that builds the book, the folder it says the book is built into)."""
    match = re.search(r"^(make book)\s+# build the book into (\S+?)/? ", README, re.MULTILINE)
    assert match, "the README's two commands no longer say how the book is built"
    return match[1], match[2]


def steps_using(job: dict, action: str) -> list[dict]:
    return [step for step in job["steps"] if step.get("uses", "").split("@")[0] == action]


def test_it_builds_with_the_readme_command_and_deploys_what_that_builds():
    flow = workflow()
    command, folder = readme_build()
    build = flow["jobs"]["build"]
    runs = [step["run"].strip() for step in build["steps"] if "run" in step]
    assert runs == [command], f"the build job should run the README's command {command!r}, runs {runs}"
    assert not any("working-directory" in step for step in build["steps"]), "the command runs at the root"
    assert [step["with"]["path"] for step in steps_using(build, "actions/upload-pages-artifact")] == [folder]
    makefile = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^book:.*\n\t.*jupyter-book build .* \.$", makefile, re.MULTILINE), \
        "make book builds the repository root (into _build/html) with jupyter-book"


def test_it_deploys_to_pages_after_the_build_on_pushes_to_main():
    flow = workflow()
    assert flow["on"]["push"]["branches"] == ["main"] and "workflow_dispatch" in flow["on"]
    assert flow["permissions"]["pages"] == "write" and flow["permissions"]["id-token"] == "write"
    deploy = flow["jobs"]["deploy"]
    assert deploy["needs"] == "build" and deploy["environment"]["name"] == "github-pages"
    assert len(steps_using(deploy, "actions/deploy-pages")) == 1
    python = steps_using(flow["jobs"]["build"], "actions/setup-python")
    assert python and python[0]["with"]["python-version"] == "3.11", "the README's Python"


def test_every_action_is_pinned_to_a_release():
    actions = [step["uses"] for job in workflow()["jobs"].values() for step in job["steps"] if "uses" in step]
    assert actions and all(re.fullmatch(r"actions/[\w-]+@v\d+", action) for action in actions), actions


def test_the_readme_says_how_to_publish():
    readers = README.split("## Readers", 1)[1].split("\n## ", 1)[0]
    for needed in (".github/workflows/book.yml", "GitHub Actions", "html.baseurl", "launch_buttons", "repository"):
        assert needed in readers, f"the readers' section does not say {needed!r}"
