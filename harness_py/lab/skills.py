"""Skill folders for the stage's disk (lesson 13).

A skill is a folder holding a SKILL.md: a few lines of front matter that say what it is for, then
the instructions themselves. `skill(name, description, body)` gives the file a Workspace needs for
one, so a cell or a test can write `lab.Workspace({**lab.skill(...), ...})`.
"""

from __future__ import annotations

__all__ = ["skill"]


def skill(name: str, description: str, body: str, *, folder: str = "skills") -> dict[str, str]:
    """{"skills/<name>/SKILL.md": text}: front matter with the name and the one-line description,
    a blank line, then the body."""
    if not name or "/" in name:
        raise ValueError(f"skill(name={name!r}): a skill's name is one folder name")
    if "\n" in description:
        raise ValueError("skill(description): the description is one line")
    text = f"---\nname: {name}\ndescription: {description}\n---\n\n{body.rstrip()}\n"
    return {f"{folder}/{name}/SKILL.md": text}
