"""Bibliography labels that match the author-year citations in the text: [Vaswani et al., 2017].

sphinxcontrib-bibtex labels entries with pybtex's "alpha" style ([VSP+17]) by default, while the
pages cite with ``bibtex_reference_style: author_year``. This extension registers a formatting
style, ``authoryear``, whose labels are "Surname, year", "Surname and Surname, year" or
"Surname et al., year", with a, b, ... appended where two entries would share one.
"""

from __future__ import annotations

from collections import Counter

from pybtex.plugin import register_plugin
from pybtex.style.formatting.plain import Style as PlainStyle
from pybtex.style.labels import BaseLabelStyle


def _surname(person) -> str:
    return " ".join(part.render_as("text") for part in person.rich_last_names)


def _base_label(entry) -> str:
    people = entry.persons.get("author") or entry.persons.get("editor") or []
    names = [_surname(person) for person in people]
    if not names:
        who = entry.fields.get("title", entry.key)
    elif len(names) == 1:
        who = names[0]
    elif len(names) == 2:
        who = f"{names[0]} and {names[1]}"
    else:
        who = f"{names[0]} et al."
    return f"{who}, {entry.fields.get('year', 'n.d.')}"


class AuthorYearLabelStyle(BaseLabelStyle):
    def format_labels(self, sorted_entries):
        entries = list(sorted_entries)
        labels = [_base_label(entry) for entry in entries]
        shared = {label for label, count in Counter(labels).items() if count > 1}
        seen: Counter = Counter()
        for label in labels:
            if label in shared:
                seen[label] += 1
                label += "abcdefghijklmnopqrstuvwxyz"[seen[label] - 1]
            yield label


class AuthorYearStyle(PlainStyle):
    default_label_style = AuthorYearLabelStyle


def setup(app):
    register_plugin("pybtex.style.labels", "authoryear", AuthorYearLabelStyle)
    register_plugin("pybtex.style.formatting", "authoryear", AuthorYearStyle)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
