"""Output for people and for logs (untrusted display).

- ``show_table``: a table when it fits the width (80 columns when the output is a file or
  a pipe), otherwise the same rows as a list, one block per row: never a column cut
  to ``pr...``.
- ``Progress``: a transient bar on a terminal; on a file or a pipe one line per item
  (``certify 3/20: layer dense``), flushed, so a log shows what is running now.
- ``say``: text printed as it is. Kernel statements are full of brackets
  (``x[i, 2*j]``, ``Lamda[i<n](...)``, ``[u >= 0]``) that rich would otherwise read as
  markup and drop; everything from the kernel goes through ``say`` or ``cell``.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

from rich.console import Console
from rich.text import Text


def console(stderr: bool = False) -> Console:
    """A console that wraps nothing it is given (logs keep whole lines) and reads no
    markup unless asked."""
    return Console(stderr=stderr, highlight=False)


def say(out: Console, text: str, style: str | None = None):
    """Print ``text`` exactly (no markup, no highlighting), whole lines."""
    out.print(Text(str(text), style=style or ""), soft_wrap=True)


@dataclass(frozen=True)
class cell:
    """A table cell: plain text (never markup) and an optional style."""
    text: str
    style: str = ""


def _cell(value) -> cell:
    return value if isinstance(value, cell) else cell("" if value is None else str(value))


def _table(columns, cells, title, right):
    from rich import box
    from rich.table import Table
    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", pad_edge=False, collapse_padding=True)
    for c in columns:
        table.add_column(c, justify="right" if c in right else "left", no_wrap=True)
    for row in cells:
        table.add_row(*(Text(c.text, style=c.style) for c in row))
    return table


def show_table(out: Console, columns, rows, title: str | None = None, right=(), width: int | None = None,
               optional=()):
    """Print ``rows`` (lists of values or ``cell``s) under ``columns`` as a table if it
    fits ``width`` (default: the console's), leaving out the ``optional`` columns (in
    that order) as far as needed; else as a list of blocks, every column kept:

        name
          status: PROVED; axioms: 12; s: 0.40

    Returns the columns left out of the table, or None when it printed the list."""
    width = width or out.width
    cells = [[_cell(v) for v in row] for row in rows]
    shown = list(columns)
    for drop in [None, *optional]:
        if drop in shown:
            shown.remove(drop)
        keep = [columns.index(c) for c in shown]
        table = _table(shown, [[row[k] for k in keep] for row in cells], title, right)
        if out.measure(table, options=out.options.update(max_width=10_000)).maximum <= width:
            out.print(table, width=width)
            return tuple(c for c in columns if c not in shown)
    if title:
        say(out, title, "bold")
    for row in cells:
        head = row[0]
        out.print(Text(head.text, style=head.style or "bold"), soft_wrap=True)
        fields = [f"{c}: {v.text}" for c, v in zip(columns[1:], row[1:]) if v.text]
        for line in _pack(fields, width):
            say(out, line)
    return None


def _pack(fields, width: int) -> list:
    """``fields`` on lines of at most ``width`` columns, split by ``; ``: the first line
    indented 2, the rest 4; a field longer than a line is wrapped at its spaces (a
    single word longer than a line stays whole)."""
    import textwrap
    lines, line = [], ""
    for f in fields:
        if line and len(line) + 2 + len(f) > width:
            lines.append(line)
            line = ""
        indent = "    " if lines or line else "  "
        candidate = (line + "; " + f) if line else indent + f
        if len(candidate) <= width:
            line = candidate
            continue
        if line:
            lines.append(line)
            indent = "    "
        wrapped = textwrap.wrap(f, width=max(20, width - len(indent)), break_long_words=False,
                                break_on_hyphens=False)
        lines += [indent + w if k == 0 else indent + "  " + w for k, w in enumerate(wrapped[:-1])]
        line = (indent if len(wrapped) == 1 else indent + "  ") + wrapped[-1]
    if line:
        lines.append(line)
    return lines


class Progress:
    """Progress over ``total`` items.

    On a terminal: a transient bar with the current item. Otherwise one line per item
    on stderr, ``LABEL K/TOTAL: WHAT[  NOTE]``, printed when the item starts
    (``start``) or, for items reported when done (``done``), when it ends. ``quiet``
    prints nothing at all (``--json`` runs)."""

    def __init__(self, label: str, total: int, quiet: bool = False, err: Console | None = None):
        self.label, self.total, self.quiet = label, total, quiet
        self.err = err or Console(stderr=True, highlight=False)
        self.tty = self.err.is_terminal and not quiet
        self.count = 0
        self.bar = None

    def __enter__(self):
        if self.tty:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress as Bar, TextColumn, TimeElapsedColumn
            self.bar = Bar(TextColumn(self.label), BarColumn(), MofNCompleteColumn(),
                           TextColumn("{task.description}", markup=False), TimeElapsedColumn(),
                           console=self.err, transient=True)
            self.bar.__enter__()
            self.task = self.bar.add_task("", total=self.total)
        return self

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.__exit__(*exc)
        return False

    def _line(self, what: str, note: str = ""):
        if self.quiet or self.tty:
            return
        total = f"/{self.total}" if self.total else ""
        sys.stderr.write(f"{self.label} {self.count}{total}: {what}{'  ' + note if note else ''}\n")
        sys.stderr.flush()

    def start(self, what: str):
        """Item ``what`` begins (the previous one, if any, is done)."""
        self.count += 1
        if self.bar is not None:
            self.bar.update(self.task, completed=self.count - 1, description=what)
        self._line(what)

    def done(self, what: str, note: str = ""):
        """Item ``what`` is done (for work reported as it completes)."""
        self.count += 1
        if self.bar is not None:
            self.bar.update(self.task, completed=self.count, description=what)
        self._line(what, note)
