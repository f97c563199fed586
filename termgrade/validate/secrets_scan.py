"""detect-secrets at release scale: its own plugins and filters, on the lines they can flag.

``detect-secrets`` runs every plugin on every line through Python calls, about 60 KB/s:
the 82 MB of text in a 3,566-task corpus would take 25 minutes. Almost no line can be
flagged by any plugin, and which lines can is decidable in bulk: a line is a *candidate*
when, after the transformers detect-secrets applies (YAML, INI), it

- matches one of a regex plugin's own patterns, or a cheaper pattern that every match of
  that plugin's patterns also matches (:data:`GATES`, for the few slow ones);
- holds one of the keyword plugin's deny-listed words (ASCII case folded);
- holds a run of an entropy plugin's characters whose entropy, by that plugin's own
  function, exceeds its limit (the quoted strings it scores are such runs).

A pattern is not run at all on a text that holds none of the strings every match of it
must hold (:func:`.regex_literals.required_literals`, read from the pattern by ``re``'s
own parser), so most of the ~45 patterns are one substring test per file.

A candidate line goes through detect-secrets' own line processing (its line filters,
``_scan_line`` and its context filters, with the file's lines as context) with only the
plugins that flag it, the others yielding nothing there; so every finding, and every
filter and allowlist decision, is detect-secrets'. A plugin of a kind not known here turns
the gate off (every line is a candidate for every plugin). ``tests/validate/test_secrets_scan.py``
checks that the findings equal ``detect_secrets.core.scan.scan_file``'s on files with a
secret for every plugin; ``benchmarks/secret_scan.py`` does so on a corpus sample.
The gate reaches into detect-secrets 1.5's scan internals, hence the pin in
pyproject.toml.
"""

from __future__ import annotations

import bisect
import io
import itertools
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from termgrade.validate.regex_literals import required_literals

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ\u212a\u017f\u0130\u0131",
                             "abcdefghijklmnopqrstuvwxyzksii")
"""Case folding that keeps every offset: ASCII, plus the non-ASCII letters Python's
IGNORECASE matches to ASCII ones (Kelvin sign, long s, dotted and dotless i)."""

_VALUE_AFTER_KEYWORD = r"(?:key|pw|pass|token)[^\n]*[0-9a-z_-]{24}"
GATES: dict[str, tuple[tuple[str, ...], bool]] = {
    # Plugin class -> (patterns that every line the plugin's own patterns match also
    # matches, whether they run on ASCII-lowered text). The plugins of the keyword family
    # need a keyword and then a value of 24 or more [0-9a-z_-] on the same line.
    "CloudantDetector": ((_VALUE_AFTER_KEYWORD, r"cloudant\.com"), True),
    "IbmCloudIamDetector": ((_VALUE_AFTER_KEYWORD,), True),
    "IbmCosHmacDetector": ((r"secret[^\n]*[0-9a-f]{48}",), True),
    "SoftlayerDetector": ((_VALUE_AFTER_KEYWORD, r"api\.softlayer\.com"), True),
    "ArtifactoryDetector": ((r"AKC[a-zA-Z0-9]{10}|AP[\dABCDEF][a-zA-Z0-9]{8}",), False),
    "MailchimpDetector": ((r"-us[0-9]",), False),
    # Those below start at a plain character: re finds where to try them at C speed.
    "TelegramBotTokenDetector": ((r":[0-9A-Za-z_-]{35}",), False),
    "IPPublicDetector": ((r"\.[0-9]{1,3}\.[0-9]{1,3}\.",), False),
    "DiscordBotTokenDetector": ((r"\.[a-zA-Z\d_-]{6}\.[a-zA-Z\d_-]{27}",), False),
    "SlackDetector": ((r"xox[abposr]-", r"hooks\.slack\.com"), True),
    "StripeDetector": ((r"k_live_",), False),
}
NEEDLES: dict[str, tuple[str, ...]] = {
    # A pattern that matches only text holding one of these strings is not run on a
    # text that holds none of them (a substring test is far cheaper than a regex pass).
    _VALUE_AFTER_KEYWORD: ("key", "pw", "pass", "token"),
    r"secret[^\n]*[0-9a-f]{48}": ("secret",),
    r"xox[abposr]-": ("xox",),
}
_KEYWORD_NEEDLES = ("key", "pass", "pwd", "secret", "contrase")
"""Every word of the keyword plugin's deny list holds one of these."""
QUOTED = r'([\'"])([{}]+)(\1)'
"""detect-secrets 1.5's entropy plugins' own pattern (charset escaped into it): with it,
only quoted strings are scored when files are scanned."""


@dataclass(frozen=True, eq=False)  # hashed by identity: a plugin is not hashable
class _Sieve:
    """One plugin's first stage: patterns every line it flags matches (on the text as
    it is, or ASCII-lowered); each line they find is then confirmed by the plugin."""

    plugin: Any
    patterns: tuple[re.Pattern[str], ...]
    lowered: bool
    fewest_distinct: int = 0
    """Entropy plugins: a run needs this many distinct characters to pass the limit."""


def _keyword_pattern(words: Iterable[str]) -> str:
    def fold(word: str) -> str:
        return "".join(f"[{c}{c.upper()}]" if not c.isascii() and c.isalpha() else c
                       for c in word.lower())
    return "|".join(fold(word) for word in words)


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    """One compiled object per pattern: sieves that share one share its matches."""
    return re.compile(pattern)


@cache
def _needles(pattern: re.Pattern[str], on_lowered: bool) -> tuple[tuple[str, ...], bool]:
    """The strings one of which a text must hold for ``pattern`` to match it (none:
    always run it), and whether to look for them in the ASCII-lowered text."""
    given = NEEDLES.get(pattern.pattern)
    if given is not None:
        return given, on_lowered
    return (required_literals(pattern) or (),
            on_lowered or bool(pattern.flags & re.IGNORECASE))


@lru_cache(maxsize=1)
def _sieves() -> tuple[_Sieve, ...] | None:
    """Every plugin's sieve; None when a plugin is of a kind not known here."""
    from detect_secrets.plugins.base import RegexBasedDetector
    from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin
    from detect_secrets.plugins.keyword import DENYLIST, KeywordDetector
    from detect_secrets.settings import get_plugins

    sieves = []
    for plugin in get_plugins():
        name = type(plugin).__name__
        if name in GATES and isinstance(plugin, RegexBasedDetector):
            patterns, on_lowered = GATES[name]
            sieves.append(_Sieve(plugin, tuple(_compiled(p) for p in patterns), on_lowered))
        elif isinstance(plugin, RegexBasedDetector):
            sieves.append(_Sieve(plugin, tuple(re.compile(p.pattern, p.flags | re.MULTILINE)
                                               for p in plugin.denylist), False))
        elif isinstance(plugin, KeywordDetector):
            words = _keyword_pattern(DENYLIST)
            if all(any(n in w for n in _KEYWORD_NEEDLES) for w in DENYLIST):
                NEEDLES.setdefault(words, _KEYWORD_NEEDLES)
            sieves.append(_Sieve(plugin, (_compiled(words),), True))
        elif isinstance(plugin, HighEntropyStringsPlugin):
            # Entropy over n distinct characters is at most log2(n).
            fewest = math.floor(2 ** plugin.entropy_limit) + 1
            chars = f"[{re.escape(plugin.charset)}]"
            if plugin.regex.pattern == QUOTED.format(re.escape(plugin.charset)):
                # It scores only quoted runs: a quote, the run, a quote left for the next
                # string to open with (the plugin's own scan may reuse it so).
                run = re.compile(f"['\"]({chars}{{{fewest},}})(?=['\"])")
            else:
                run = re.compile(f"{chars}{{{fewest},}}")
            sieves.append(_Sieve(plugin, (run,), False, fewest))
        else:
            return None
    return tuple(sieves)


def _flags(sieve: _Sieve, line: str, filename: str) -> bool:
    """Whether the plugin's own ``analyze_string`` finds a secret value in ``line``, as
    its ``analyze_line`` would (what detect-secrets then does with it is its own)."""
    from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin
    from detect_secrets.plugins.keyword import (
        QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP,
        REGEX_BY_FILETYPE,
        KeywordDetector,
    )
    from detect_secrets.util.filetype import determine_file_type

    plugin = sieve.plugin
    if isinstance(plugin, KeywordDetector):
        regexes = REGEX_BY_FILETYPE.get(determine_file_type(filename),
                                        QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP)
        return any(True for _ in plugin.analyze_string(line, denylist_regex_to_group=regexes))
    if isinstance(plugin, HighEntropyStringsPlugin):
        return any(plugin.calculate_shannon_entropy(value) > plugin.entropy_limit
                   for value in plugin.analyze_string(line))
    return any(True for _ in plugin.analyze_string(line))


@dataclass(frozen=True)
class _Probe:
    """One regex pass of :func:`sieve_hits`, shared by the sieves that share it."""

    pattern: re.Pattern[str]
    on_lowered: bool
    needles: tuple[str, ...]
    """Strings one of which the text must hold for the pattern to match (none: always)."""
    needles_lowered: bool
    fewest_distinct: int


@lru_cache(maxsize=4)
def _plan(sieves: tuple[_Sieve, ...]) -> tuple[tuple[_Probe, ...],
                                               tuple[tuple[_Sieve, tuple[int, ...]], ...]]:
    """The distinct regex passes of ``sieves``, and each sieve's passes (by index)."""
    probes: list[_Probe] = []
    index: dict[tuple[int, bool, int], int] = {}
    per_sieve = []
    for sieve in sieves:
        mine: list[int] = []
        for pattern in sieve.patterns:
            key = (id(pattern), sieve.lowered, sieve.fewest_distinct)
            if key not in index:
                needles, needles_lowered = _needles(pattern, sieve.lowered)
                index[key] = len(probes)
                probes.append(_Probe(pattern, sieve.lowered, needles, needles_lowered,
                                     sieve.fewest_distinct))
            if index[key] not in mine:
                mine.append(index[key])
        per_sieve.append((sieve, tuple(mine)))
    return tuple(probes), tuple(per_sieve)


def sieve_hits(lines: list[str], sieves: tuple[_Sieve, ...]) -> dict[int, list[_Sieve]]:
    """0-based indexes of the lines (rstripped, as detect-secrets reads them) that some
    sieve finds, each with those sieves (in detect-secrets' plugin order): no other
    plugin can find a secret value in that line, and no plugin in any other line."""
    probes, per_sieve = _plan(sieves)
    text = "\n".join(lines)
    lower = text.translate(_ASCII_LOWER)
    starts: list[int] = []
    found: list[set[int]] = []
    for probe in probes:
        lines_hit: set[int] = set()
        found.append(lines_hit)
        hay = lower if probe.needles_lowered else text
        if probe.needles and not any(map(hay.__contains__, probe.needles)):
            continue
        pattern, fewest = probe.pattern, probe.fewest_distinct
        for match in pattern.finditer(lower if probe.on_lowered else text):
            if fewest and len(set(match.group(pattern.groups))) < fewest:
                continue
            if not starts:  # offsets of the lines, once a match needs them
                starts.extend(itertools.accumulate(
                    (len(line) + 1 for line in lines[:-1]), initial=0))
            first = bisect.bisect_right(starts, match.start()) - 1
            last = bisect.bisect_right(starts, max(match.start(), match.end() - 1)) - 1
            lines_hit.update(range(first, last + 1))
    hits: dict[int, list[_Sieve]] = {}
    for sieve, passes in per_sieve:
        for index in set().union(*(found[i] for i in passes)):
            hits.setdefault(index, []).append(sieve)
    return hits


@lru_cache(maxsize=1)
def re2_prefilter() -> str | None:
    """An RE2 pattern that matches every line some sieve finds (:mod:`.re2_superset`):
    a line it does not match, no plugin can flag. None when there is no such pattern
    (a plugin of a kind not known here, or a pattern with no RE2 superset)."""
    from termgrade.validate.errors import Untranslatable
    from termgrade.validate.re2_superset import re2_superset

    sieves = _sieves()
    if sieves is None:
        return None
    try:
        return "|".join(f"(?:{re2_superset(probe.pattern, lowered=probe.on_lowered)})"
                        for probe in _plan(sieves)[0])
    except Untranslatable:
        return None


def flagging_plugins(lines: list[str], filename: str = "") -> dict[int, list[Any]]:
    """0-based indexes of the lines (rstripped, as detect-secrets reads them) in which
    some plugin finds a secret value, each with those plugins in detect-secrets' order
    (all of them, on every line, when a plugin is of a kind not known here);
    ``filename`` picks the keyword plugin's patterns."""
    sieves = _sieves()
    if sieves is None:
        from detect_secrets.settings import get_plugins

        everyone = list(get_plugins())
        return {index: everyone for index in range(len(lines))}
    flagged: dict[int, list[Any]] = {}
    for index, found in sieve_hits(lines, sieves).items():
        plugins = [s.plugin for s in found if _flags(s, lines[index], filename)]
        if plugins:
            flagged[index] = plugins
    return flagged


def candidate_lines(lines: list[str], filename: str = "") -> set[int]:
    """0-based indexes of the lines (rstripped, as detect-secrets reads them) in which
    some plugin finds a secret value; ``filename`` picks the keyword plugin's patterns."""
    return set(flagging_plugins(lines, filename))


_NOT_INI = re.compile(r"^[^\s#;\[=:][^=:\n]*$", re.MULTILINE)
"""A line configparser can only record as an error: unindented (so no continuation),
not a comment or a section header, and with no ``=`` or ``:`` (so no option)."""


def _ini_fails(text: str) -> bool:
    """Whether the eager INI transformer (a ``[global]`` header, then configparser) must
    fail on this text, so that detect-secrets' second pass over it finds nothing."""
    return _NOT_INI.search(text) is not None


def _sectionless(text: str) -> bool:
    """Whether configparser must refuse this text for want of a section header: its
    first line that is neither blank nor a ``#``/``;`` comment does not open with ``[``
    (configparser's own reading, line by line), or there is no such line (no section)."""
    for line in io.StringIO(text):
        value = line.strip()
        if value and not value.startswith(("#", ";")):
            return not value.startswith("[")
    return True


def _fails(transformer: Any, text: str) -> bool:
    """Whether this detect-secrets transformer must raise its ParsingError on ``text``."""
    from detect_secrets.transformers.config import ConfigFileTransformer, EagerConfigFileTransformer

    kind = type(transformer)
    if kind is EagerConfigFileTransformer:
        return _ini_fails(text)
    if kind is ConfigFileTransformer:
        # Without a header to start it, or with a line no section can hold.
        return _sectionless(text) or _ini_fails(text)
    return False  # a transformer not known here may succeed


def _plain_lines(filename: str) -> list[str] | None:
    """The file's lines as detect-secrets' first pass reads them, when that pass reads
    them untransformed and its second (eager) pass must find nothing: every transformer
    that would try the file must fail on it. None when that is not certain; detect-secrets
    then reads the file its own way."""
    from detect_secrets.transformers import get_transformers

    try:
        with open(filename) as handle:  # as detect-secrets opens it
            text = handle.read()
    except (OSError, UnicodeDecodeError):
        return None
    transformers: Iterable[Any] = get_transformers()
    if not all(_fails(t, text) for t in transformers if t.should_parse_file(filename)):
        return None
    return [line.rstrip() for line in io.StringIO(text)]


def _scan_lines(lines: list[str], filename: str) -> list[Any]:
    """detect-secrets' line processing (``_process_line_based_plugins``: its line
    filters, then each plugin's ``_scan_line`` and its context filters, with the file's
    own lines as context) on the lines some plugin flags, with the plugins that flag
    them: any other line, or plugin, would yield nothing."""
    from detect_secrets.core.scan import _is_filtered_out, _scan_line
    from detect_secrets.util.code_snippet import get_code_snippet

    found: list[Any] = []
    for index, plugins in sorted(flagging_plugins(lines, filename).items()):
        line, number = lines[index], index + 1
        context = get_code_snippet(lines=lines, line_number=number)
        if _is_filtered_out(required_filter_parameters=["line"], filename=filename,
                            line=line, context=context):
            continue
        found.extend(
            secret for plugin in plugins
            for secret in _scan_line(plugin=plugin, filename=filename, line=line,
                                     line_number=number, context=context)
            if not _is_filtered_out(required_filter_parameters=["context"],
                                    filename=secret.filename, secret=secret.secret_value,
                                    plugin=plugin, line=line, context=context))
    return found


def scan_file(filename: str) -> Iterator[Any]:
    """The ``PotentialSecret``s detect-secrets' ``scan_file`` yields for ``filename``
    (call inside ``detect_secrets.settings.default_settings()``)."""
    from detect_secrets.core.scan import _get_lines_from_file, _is_filtered_out

    if _is_filtered_out(required_filter_parameters=["filename"], filename=filename):
        return
    plain = _plain_lines(filename)
    if plain is not None:
        yield from _scan_lines(plain, filename)
        return
    try:
        for round_, raw_lines in enumerate(_get_lines_from_file(filename)):
            found = _scan_lines([line.rstrip() for line in raw_lines], filename)
            if found:
                yield from found
                return
            # The second pass is detect-secrets' eager INI reading of the file.
            if round_ == 0 and _ini_parse_fails(filename):
                return
    except OSError:
        return


class _NamedText(io.StringIO):
    """A text with a file name, as detect-secrets' transformers read a file."""

    def __init__(self, text: str, name: str) -> None:
        super().__init__(text)
        self.name = name


def plain_text_lines(text: str, filename: str) -> list[str] | None:
    """:func:`_plain_lines` of a text held in memory (already in universal newlines):
    its lines when every transformer that would try it must fail, else None."""
    from detect_secrets.transformers import get_transformers

    transformers: Iterable[Any] = get_transformers()
    if not all(_fails(t, text) for t in transformers if t.should_parse_file(filename)):
        return None
    return [line.rstrip() for line in io.StringIO(text)]


def scan_text(text: str, filename: str, *, file_filters: bool = True) -> list[Any]:
    """The ``PotentialSecret``s detect-secrets' ``scan_file`` would yield for a file
    named ``filename`` holding ``text`` (with ``\\r`` and ``\\r\\n`` already read as
    ``\\n``, as ``open`` reads a file); call inside ``default_settings()``.
    ``file_filters=False`` skips the filters that decide whether to read a file at all
    (one is that the file exists): for a text that is not a file."""
    from detect_secrets.core.scan import _is_filtered_out
    from detect_secrets.transformers import get_transformed_file

    if file_filters and _is_filtered_out(required_filter_parameters=["filename"],
                                         filename=filename):
        return []
    plain = plain_text_lines(text, filename)
    if plain is not None:
        return _scan_lines(plain, filename)
    # detect-secrets' _get_lines_from_file, on the text: transformed lines (or the raw
    # ones), then, when they find nothing, the eager transformers' lines.
    handle: Any = _NamedText(text, filename)  # detect-secrets' NamedIO protocol
    lines = get_transformed_file(handle) or handle.readlines()
    found = _scan_lines([line.rstrip() for line in lines], filename)
    if found:
        return found
    handle.seek(0)
    eager = get_transformed_file(handle, use_eager_transformers=True)
    return _scan_lines([line.rstrip() for line in eager], filename) if eager else []


def _ini_parse_fails(filename: str) -> bool:
    try:
        with open(filename) as handle:  # as detect-secrets opens it
            return _ini_fails(handle.read())
    except (OSError, UnicodeDecodeError):
        return False
