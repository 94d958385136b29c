# SPDX-License-Identifier: Apache-2.0
"""OCRmyPDF plugin: ppocr-vk as the OCR engine, for a searchable PDF.

    ocrmypdf --plugin tools/ocrmypdf/ppocr_vk_ocrmypdf.py scan.pdf out.pdf

OCRmyPDF rasterises each page and hands the image to this engine, which runs
`ppocr-vk --format hocr` on it.

Written for the OCRmyPDF of Debian 12 (14.0), whose plugin interface is
ocrmypdf/pluginspec.py; the built-in Tesseract plugin is the model. In that
version the text layer can come from two places:

- generate_pdf (`--pdf-renderer sandwich`, what `auto` means here, as with
  Tesseract): this plugin writes the page's text layer from the hOCR itself, in
  the form Tesseract's PDF renderer writes it and OCRmyPDF's grafting expects
  (ocrmypdf/_graft.py takes one font, /f-0-0, from the first page and lends it to
  every page): invisible text in a glyphless CID font whose codes are UTF-16, so
  Chinese is kept as well as Latin text.
- generate_hocr (`--pdf-renderer hocr`): OCRmyPDF's own hOCR-to-PDF transform
  (ocrmypdf/hocrtransform.py) draws the text in Helvetica, which has no Chinese:
  Chinese is lost there, and the plugin says so.

Options: --ppocr-vk PATH (else `ppocr-vk` on the PATH), --ppocr-vk-arg ARG
(repeatable, e.g. --ppocr-vk-arg=--device=1), --ppocr-vk-timeout SECONDS.
"""

from __future__ import annotations

import base64
import logging
import math
import os
import re
import shutil
import subprocess
import zlib
from pathlib import Path
from xml.etree import ElementTree

from PIL import Image

from ocrmypdf import hookimpl
from ocrmypdf.exceptions import MissingDependencyError, SubprocessOutputError
from ocrmypdf.pluginspec import OcrEngine, OrientationConfidence

log = logging.getLogger(__name__)

XHTML = '{http://www.w3.org/1999/xhtml}'
# What the PP-OCR models read: Simplified Chinese (with some Traditional) and English.
LANGUAGES = frozenset({'chi_sim', 'eng'})

# Tesseract's glyphless font (tessdata/pdf.ttf, Apache-2.0, as this project):
# one empty glyph, half an em wide. Every code of the text layer draws it.
GLYPHLESS_TTF = base64.b64decode(
    'AAEAAAAKAIAAAwAgT1MvMlbeyJQAAAEoAAAAYGNtYXAACgA0AAABkAAAAB5nbHlmFSJBJAAAAbgA'
    'AAAYaGVhZAt48WUAAACsAAAANmhoZWEMAgQCAAAA5AAAACRobXR4BAAAAAAAAYgAAAAIbG9jYQAM'
    'AAAAAAGwAAAABm1heHAABAAFAAABCAAAACBuYW1l8usW2gAAAdAAAABLcG9zdAABAAEAAAIcAAAA'
    'IAABAAAAAQAAsJRxEF8PPPUEBwgAAAAAAM+a/G4AAAAA1MOn8gAAAAAEAAgAAAAAEAACAAAAAAAA'
    'AAEAAAgA//8AAAQAAAAAAAQAAAEAAAAAAAAAAAAAAAAAAAACAAEAAAACAAQAAQAAAAAAAQAAAAAA'
    'AAAAAAAAAAAAAAAAAwAAAZAABQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAUAAQABAAAAAAAAAAAA'
    'AAAAAAAAAAAAAAAAR09PRwBAAAAAAAAB//8AAAABAAGAAAAAAAAAAAAAAAAAAAABAAAAAAAABAAA'
    'AAAAAAIAAQAAAAAAFAADAAAAAAAUAAYACgAAAAAAAAAAAAAAAAAMAAAAAQAAAAAEAAgAAAMAADEh'
    'ESEEAPwACAAAAAADACoAAAADAAAABQAWAAAAAQAAAAAABQALABYAAwABBAkABQAWAAAAVgBlAHIA'
    'cwBpAG8AbgAgADEALgAwVmVyc2lvbiAxLjAAAAEAAAAAAAAAAAAAAAAAAQAAAAAAAAAAAAAAAAAA'
    'AAA='
)
CHAR_WIDTH = 0.5  # of the font size: the font's /DW 500
# A detected line's box has a margin around its text, so that neighbouring
# boxes touch or overlap; text that overlaps its neighbours' is read out of
# order by pdftotext. The text's band: the box's middle 80 %.
TEXT_BAND = 0.8


@hookimpl
def add_options(parser):
    group = parser.add_argument_group(
        "ppocr-vk", "OCR with ppocr-vk (PaddleOCR's PP-OCR models on Vulkan)"
    )
    group.add_argument(
        '--ppocr-vk',
        metavar='PATH',
        help="The ppocr-vk executable (default: ppocr-vk on the PATH).",
    )
    group.add_argument(
        '--ppocr-vk-arg',
        action='append',
        default=[],
        metavar='ARG',
        help="An extra argument for ppocr-vk, repeatable; give options as "
        "--ppocr-vk-arg=--device=1.",
    )
    group.add_argument(
        '--ppocr-vk-timeout',
        type=float,
        default=600.0,
        metavar='SECONDS',
        help="Give up on a page after this long (default 600: a dense page on a "
        "CPU Vulkan device takes tens of seconds).",
    )


def _executable(options) -> str:
    """The ppocr-vk to run, as an absolute path, or MissingDependencyError."""
    given = options.ppocr_vk
    if given:
        path = given if os.sep in given else shutil.which(given)
        if not path or os.path.isdir(path) or not os.access(path, os.X_OK):
            raise MissingDependencyError(f"--ppocr-vk {given}: not an executable file")
        return os.path.abspath(path)
    path = shutil.which('ppocr-vk')
    if not path:
        raise MissingDependencyError(
            "ppocr-vk was not found on the PATH: give --ppocr-vk PATH "
            "(tools/setup.sh builds it as build/ppocr-vk)"
        )
    return path


def _version_of(exe) -> str:
    try:
        out = subprocess.run(
            [exe, '--version'], capture_output=True, text=True, timeout=60, check=False
        ).stdout
    except (OSError, TypeError, subprocess.TimeoutExpired):
        return 'unknown'
    return out.strip().removeprefix('ppocr-vk ') or 'unknown'


@hookimpl
def check_options(options):
    exe = _executable(options)
    try:
        helptext = subprocess.run(
            [exe, '--help'], capture_output=True, text=True, timeout=60, check=False
        ).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        raise MissingDependencyError(f"{exe}: cannot run: {e}") from e
    if 'hocr' not in helptext:
        raise MissingDependencyError(
            f"{exe} cannot write hOCR (--format hocr): it is older than this plugin"
        )
    options.ppocr_vk = exe
    if options.pdf_renderer == 'auto':
        options.pdf_renderer = 'sandwich'
    elif options.pdf_renderer.startswith('hocr'):
        log.warning(
            "--pdf-renderer %s draws the text layer in Helvetica, which has no "
            "Chinese: Chinese text is lost. Leave --pdf-renderer at auto.",
            options.pdf_renderer,
        )


def _run_ppocr(input_file: Path, options) -> bytes:
    """ppocr-vk's hOCR of one page image."""
    cmd = [options.ppocr_vk, '--format', 'hocr', *options.ppocr_vk_arg, '--', os.fspath(input_file)]
    log.debug("running %s", cmd)
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=options.ppocr_vk_timeout, check=False)
    except subprocess.TimeoutExpired as e:
        raise SubprocessOutputError(
            f"ppocr-vk did not finish {input_file.name} within "
            f"{options.ppocr_vk_timeout:g} s (--ppocr-vk-timeout)"
        ) from e
    err = p.stderr.decode('utf-8', 'replace').strip()
    if p.returncode == 3:  # no usable Vulkan device, or no usable models
        raise MissingDependencyError(f"ppocr-vk: {err}")
    if p.returncode != 0:
        raise SubprocessOutputError(f"ppocr-vk failed on {input_file.name} (exit {p.returncode}): {err}")
    if err:
        log.debug("ppocr-vk: %s", err)
    return p.stdout


# --- the hOCR, read ---------------------------------------------------------

_BBOX = re.compile(r'\bbbox\s+(-?\d+)\s+(-?\d+)\s+(-?\d+)\s+(-?\d+)')
_BASELINE = re.compile(r'\bbaseline\s+(-?[\d.]+)\s+(-?[\d.]+)')
_TEXTANGLE = re.compile(r'\btextangle\s+(-?\d+)')
_LINE_CLASSES = ('ppocr_line', 'ocr_header', 'ocr_textfloat', 'ocr_caption')


def _is_cjk(ch: str) -> bool:
    """As ppocr-vk's words: a CJK character is a word of its own, written with no
    space before or after it."""
    cp = ord(ch)
    return (
        0x2E80 <= cp <= 0x9FFF  # radicals, CJK punctuation, kana, ideographs
        or 0xAC00 <= cp <= 0xD7AF  # hangul
        or 0xF900 <= cp <= 0xFAFF  # compatibility ideographs
        or 0xFF00 <= cp <= 0xFFEF  # full-width forms
        or 0x20000 <= cp <= 0x3FFFF
    )


def _bbox(el):
    m = _BBOX.search(el.get('title', ''))
    return tuple(int(v) for v in m.groups()) if m else None


def _parse(hocr: bytes):
    try:
        return ElementTree.fromstring(hocr)
    except ElementTree.ParseError as e:
        raise SubprocessOutputError(f"ppocr-vk wrote hOCR that does not parse: {e}") from e


def _page_size(root):
    for div in root.iter(f'{XHTML}div'):
        if div.get('class') == 'ocr_page' and _bbox(div):
            x0, y0, x1, y1 = _bbox(div)
            return x1 - x0, y1 - y0
    raise SubprocessOutputError("ppocr-vk wrote hOCR without the page's size")


def _lines(root):
    """Each line in reading order: its title and its words as (text, bbox,
    space_after), space_after where the text had a space before the next word."""
    for line in root.iter(f'{XHTML}span'):
        if line.get('class') not in _LINE_CLASSES or not _bbox(line):
            continue
        words = []
        for w in line.iter(f'{XHTML}span'):
            text = ''.join(w.itertext()).strip() if w.get('class') == 'ocrx_word' else ''
            if text and _bbox(w):
                words.append([text, _bbox(w), False])
        for a, b in zip(words, words[1:]):
            a[2] = not (_is_cjk(a[0][-1]) or _is_cjk(b[0][0]))
        if words:
            yield line, words


def _page_text(root) -> str:
    """The page's text for --sidecar: a line per hOCR line, paragraphs apart."""
    paragraphs = []
    for par in root.iter(f'{XHTML}p'):
        lines = [
            ''.join(t + (' ' if space else '') for t, _, space in words)
            for _, words in _lines(par)
        ]
        if lines:
            paragraphs.append('\n'.join(lines))
    return '\n\n'.join(paragraphs) + '\n' if paragraphs else ''


# --- the text layer, written ------------------------------------------------


def _utf16_hex(text: str) -> str:
    # the layer's font maps every 16-bit code to itself: a character outside the
    # BMP (a surrogate pair) would come back as two lone halves
    bmp = ''.join(c if ord(c) <= 0xFFFF else '\ufffd' for c in text)
    return bmp.encode('utf-16-be').hex().upper()


# Per hOCR textangle (counter-clockwise degrees): the reading direction on the
# PDF page; for a word box and its line's box (x0, y0, x1, y1) in pixels, y
# down, the point its baseline starts at (on the line box's edge below the
# glyphs); the word's extent along the reading direction; and the line's
# thickness across it.
_ORIENTATIONS = {
    0: ((1, 0), lambda w, l: (w[0], l[3]), lambda w: (w[0], w[2]), lambda l: l[3] - l[1]),
    90: ((0, 1), lambda w, l: (l[2], w[3]), lambda w: (-w[3], -w[1]), lambda l: l[2] - l[0]),
    180: ((-1, 0), lambda w, l: (w[2], l[1]), lambda w: (-w[2], -w[0]), lambda l: l[3] - l[1]),
    270: ((0, -1), lambda w, l: (l[0], w[1]), lambda w: (w[1], w[3]), lambda l: l[2] - l[0]),
}


def _orientation(title: str):
    m = _TEXTANGLE.search(title)
    angle = int(m.group(1)) % 360 if m else 0
    return angle if angle in _ORIENTATIONS else 0


def _text_layer(root, dpi: float) -> bytes:
    """The page's content stream: each word as invisible text over its box."""
    scale = 72.0 / dpi
    _, height = _page_size(root)
    page_h = height * scale
    ops = [b'BT', b'3 Tr']
    for par in root.iter(f'{XHTML}p'):
        lines = list(_lines(par))
        if not lines:
            continue
        # one font size for the paragraph: pdftotext keeps lines in one block only
        # where their sizes agree, and reads blocks of turned text out of order
        thick = sorted(
            _ORIENTATIONS[_orientation(line.get('title', ''))][3](_bbox(line)) for line, _ in lines
        )
        size = TEXT_BAND * thick[len(thick) // 2] * scale
        if size <= 0:
            continue
        ops.append(b'/f-0-0 %.2f Tf' % size)
        for line, words in lines:
            ops += _line_ops(line, words, size, scale, page_h)
    ops.append(b'ET')
    return b'\n'.join(ops) + b'\n'


def _line_ops(line, words, size: float, scale: float, page_h: float):
    title = line.get('title', '')
    lbox = _bbox(line)
    angle = _orientation(title)
    (dx, dy), start_of, extent_of, thickness_of = _ORIENTATIONS[angle]
    slope = offset = 0.0
    m = _BASELINE.search(title)
    if angle == 0 and m:
        slope, offset = float(m.group(1)), float(m.group(2))
        norm = math.hypot(1.0, slope)
        dx, dy = 1.0 / norm, -slope / norm  # y points up on the page
    # the text's band in the middle of the line's box
    inset = (thickness_of(lbox) * scale - size) / 2
    for i, (text, box, space_after) in enumerate(words):
        x, y = start_of(box, lbox)
        if angle == 0:  # on the baseline, given from the line box's bottom-left corner
            y = lbox[3] + offset + slope * (x - lbox[0])
        s0, s1 = extent_of(box)
        length = s1 - s0
        if i + 1 < len(words):
            # up to where the next word starts: a gap in the text would read as a space
            length = max(length, extent_of(words[i + 1][1])[0] - s0)
        if space_after:
            text += ' '
        if slope:
            length *= math.hypot(1.0, slope)
        n = len(text.encode('utf-16-be')) // 2
        stretch = 100.0 * length * scale / (n * CHAR_WIDTH * size)
        if stretch <= 0:
            continue
        # the baseline moved off the box's edge, towards the glyphs' tops
        px, py = x * scale - dy * inset, page_h - y * scale + dx * inset
        yield b'%.4f %.4f %.4f %.4f %.2f %.2f Tm %.2f Tz <%s> Tj' % (
            dx, dy, -dy, dx, px, py, stretch, _utf16_hex(text).encode()
        )


def _stream(data: bytes, extra: bytes = b'') -> bytes:
    packed = zlib.compress(data, 9)
    return b'<< /Length %d /Filter /FlateDecode %s>>\nstream\n%s\nendstream' % (len(packed), extra, packed)


_TO_UNICODE = b"""/CIDInit /ProcSet findresource begin
12 dict begin
begincmap
/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def
/CMapName /Adobe-Identity-UCS def
/CMapType 2 def
1 begincodespacerange
<0000> <FFFF>
endcodespacerange
1 beginbfrange
<0000> <FFFF> <0000>
endbfrange
endcmap
CMapName currentdict /CMap defineresource pop
end
end
"""


def _text_pdf(content: bytes, width_pt: float, height_pt: float) -> bytes:
    """A one-page PDF with nothing visible: the text layer OCRmyPDF grafts."""
    objects = [
        b'<< /Type /Catalog /Pages 2 0 R >>',
        b'<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
        b'<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %.4f %.4f] '
        b'/Resources << /Font << /f-0-0 5 0 R >> >> /Contents 4 0 R >>' % (width_pt, height_pt),
        _stream(content),
        b'<< /Type /Font /Subtype /Type0 /BaseFont /GlyphLessFont /Encoding /Identity-H '
        b'/DescendantFonts [6 0 R] /ToUnicode 7 0 R >>',
        b'<< /Type /Font /Subtype /CIDFontType2 /BaseFont /GlyphLessFont '
        b'/CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> '
        b'/FontDescriptor 8 0 R /DW 500 /CIDToGIDMap 9 0 R >>',
        _stream(_TO_UNICODE),
        b'<< /Type /FontDescriptor /FontName /GlyphLessFont /Flags 5 /FontBBox [0 0 500 1000] '
        b'/ItalicAngle 0 /Ascent 1000 /Descent -1 /CapHeight 1000 /StemV 80 /FontFile2 10 0 R >>',
        _stream(b'\x00\x01' * 65536),  # every code draws glyph 1
        _stream(GLYPHLESS_TTF, b'/Length1 %d ' % len(GLYPHLESS_TTF)),
    ]
    out = bytearray(b'%PDF-1.5\n%\xe2\xe3\xcf\xd3\n')
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b'%d 0 obj\n%s\nendobj\n' % (number, body)
    xref = len(out)
    out += b'xref\n0 %d\n0000000000 65535 f \n' % (len(objects) + 1)
    out += b''.join(b'%010d 00000 n \n' % o for o in offsets)
    out += b'trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n' % (len(objects) + 1, xref)
    return bytes(out)


class PpocrVkOcrEngine(OcrEngine):
    """OCR with ppocr-vk."""

    @staticmethod
    def version():
        return _version_of(shutil.which('ppocr-vk'))

    @staticmethod
    def creator_tag(options):
        return f"ppocr-vk {_version_of(options.ppocr_vk)}"

    def __str__(self):
        return "ppocr-vk"

    @staticmethod
    def languages(options):
        return LANGUAGES

    @staticmethod
    def get_orientation(input_file, options):
        # ppocr-vk turns lines and pages itself: OCRmyPDF is told to rotate nothing
        return OrientationConfidence(angle=0, confidence=0.0)

    @staticmethod
    def get_deskew(input_file, options) -> float:
        return 0.0

    @staticmethod
    def generate_hocr(input_file, output_hocr, output_text, options):
        hocr = _run_ppocr(Path(input_file), options)
        root = _parse(hocr)
        Path(output_hocr).write_bytes(hocr)
        Path(output_text).write_text(_page_text(root), encoding='utf-8')

    @staticmethod
    def generate_pdf(input_file, output_pdf, output_text, options):
        hocr = _run_ppocr(Path(input_file), options)
        root = _parse(hocr)
        with Image.open(input_file) as im:
            dpi = float(im.info.get('dpi', (300.0, 300.0))[0]) or 300.0
            width, height = im.size
        # the page is the image's size at its resolution, as OCRmyPDF asks
        content = _text_layer(root, dpi)
        Path(output_pdf).write_bytes(_text_pdf(content, width * 72.0 / dpi, height * 72.0 / dpi))
        Path(output_text).write_text(_page_text(root), encoding='utf-8')


@hookimpl
def get_ocr_engine():
    return PpocrVkOcrEngine()
