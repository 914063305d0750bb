"""What the layout tests measure in a drawn page: tables, cards and the page itself wider than what shows them.

Streamlit draws a table (``st.dataframe``) on a canvas, so clipping cannot be read from the DOM.
:data:`MEASURE` reads what the grid itself draws from (its columns with their final widths after
stretching, and each cell's display text, through the React props of the grid's canvas) and measures
every header and cell with the grid's own font. A cell is clipped when its text is wider than its
column less the cell padding (for a wrapping column: wider than the lines its row holds).

Cards (bordered containers) are measured from the text they hold: a line of text whose right edge
lies past the card's is running over its neighbour. Text cut by CSS (``text-overflow``) counts as
clipped unless the element carries its whole text in a ``title`` (shown on hover).
"""

from __future__ import annotations

from dataclasses import dataclass

# Columns holding a document's own text (a chunk, an excerpt, a metadata value): one line of it is
# shown and the rest is one click or hover away, so they are cut on purpose. Every other column
# (names, settings, numbers, notes the app writes) must show its cells whole.
EXCERPT_COLUMNS = frozenset(
    {"Text", "Text (after the stage)", "text around the cut", "First words", "Value", "Query", "Question"}
)

MEASURE = r"""(excerptColumns) => {
  const problems = [];
  const ctx = document.createElement('canvas').getContext('2d');
  const widthOf = (text, font) => { ctx.font = font; return ctx.measureText(text).width; };
  // A box of a pixel or less is text for screen readers only (an icon's name), never seen.
  const shown = (el) => { const r = el.getBoundingClientRect(); return r.width > 1 && r.height > 1; };
  // Widgets show a chosen value cut to their box by design (the list shows it whole), code scrolls.
  const skipped = '[data-testid="stDataFrame"], [data-baseweb="select"], input, textarea, pre, code, .cs-source, [role="tooltip"]';
  const main = document.querySelector('[data-testid="stMain"]') || document.querySelector('section.main');
  if (main && main.scrollWidth > main.clientWidth + 1) {
    problems.push(`the page scrolls sideways: ${main.scrollWidth}px of content in ${main.clientWidth}px`);
  }
  for (const frame of document.querySelectorAll('[data-testid="stDataFrame"], [data-testid="stDataFrameResizable"]')) {
    if (frame.dataset.testid === 'stDataFrameResizable' && frame.closest('[data-testid="stDataFrame"]')) continue;
    if (!shown(frame)) continue;
    const canvas = frame.querySelector('canvas');
    if (!canvas) continue;
    const key = Object.keys(canvas).find((k) => k.startsWith('__reactFiber'));
    let fiber = key && canvas[key];
    while (fiber && !(fiber.memoizedProps && fiber.memoizedProps.columns && fiber.memoizedProps.getCellContent)) {
      fiber = fiber.return;
    }
    if (!fiber) { problems.push('a table whose grid could not be read'); continue; }
    const grid = fiber.memoizedProps;
    const theme = grid.theme;
    // The grid draws text from the cell's left padding and cuts it at the border: leave a few pixels clear.
    const slack = 3;
    const columns = grid.columns;
    const titles = columns.map((c) => c.title).join(' | ');
    const scroller = frame.querySelector('.dvn-scroller');
    const total = columns.reduce((sum, c) => sum + c.width, 0);
    const room = scroller ? scroller.clientWidth : frame.clientWidth;
    if (total > room + 1) {
      problems.push(`table [${titles}]: columns ${total}px wide in ${room}px, the right ones are cut off`);
    }
    const lineHeight = 14 * theme.lineHeight;
    const lines = Math.max(1, Math.floor((grid.rowHeight - 2 * theme.cellVerticalPadding) / lineHeight));
    const rows = Math.min(grid.rows, 60);
    columns.forEach((column, index) => {
      const header = widthOf(column.title, theme.headerFontFull) + theme.cellHorizontalPadding + slack
        + (column.icon ? theme.headerIconSize + 8 : 0);
      if (column.title && header > column.width) {
        problems.push(`table [${titles}]: header "${column.title}" needs ${Math.ceil(header)}px in a ${column.width}px column`);
      }
      if (excerptColumns.includes(column.title)) return;
      for (let row = 0; row < rows; row++) {
        const cell = grid.getCellContent([index, row]);
        if (cell.kind !== 'text' && cell.kind !== 'number') continue;
        const text = String(cell.displayData ?? '');
        const need = widthOf(text, theme.baseFontFull) + theme.cellHorizontalPadding + slack;
        const fits = cell.allowWrapping ? need <= column.width * lines * 0.85 : need <= column.width;
        if (!fits) {
          problems.push(`table [${titles}]: "${column.title}" cell "${text}" needs ${Math.ceil(need)}px in a ${column.width}px column`);
          break;
        }
      }
    });
  }
  const cards = [...document.querySelectorAll('[data-testid="stVerticalBlock"], [data-testid="stVerticalBlockBorderWrapper"]')]
    .filter((el) => shown(el) && parseFloat(getComputedStyle(el).borderRightWidth) > 0);
  for (const card of cards) {
    const edge = card.getBoundingClientRect().right;
    const walker = document.createTreeWalker(card, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const words = node.textContent.trim();
      const holder = node.parentElement;
      if (!words || !holder || !shown(holder) || holder.closest(skipped)) continue;
      // An icon is a ligature in an icon font: its name is never shown as text.
      if (getComputedStyle(holder).fontFamily.includes('Material')) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      const right = Math.max(...[...range.getClientRects()].map((r) => r.right), -Infinity);
      // The nearest box between the text and the card that hides what overflows it, if any.
      let clip = null;
      for (let box = holder; box && box !== card; box = box.parentElement) {
        if (getComputedStyle(box).overflowX !== 'visible') { clip = box; break; }
      }
      if (!clip && right > edge + 1) {
        problems.push(`card text "${words.slice(0, 60)}" runs ${Math.ceil(right - edge)}px past its card`);
        break;
      }
      if (clip && right > clip.getBoundingClientRect().right + 1 && !holder.closest('[title]')) {
        problems.push(`card text "${words.slice(0, 60)}" is cut ${Math.ceil(right - clip.getBoundingClientRect().right)}px short, with no full text on hover`);
        break;
      }
    }
  }
  return problems;
}"""


@dataclass(frozen=True)
class Viewport:
    width: int
    height: int

    def __str__(self) -> str:
        return f"{self.width}x{self.height}"


VIEWPORTS = (Viewport(1280, 800), Viewport(1440, 900))


def clipping(page) -> list[str]:  # noqa: ANN001 - a playwright page
    """Every table column, card or page in ``page`` too narrow for what it shows (empty when all fits)."""
    return page.evaluate(MEASURE, sorted(EXCERPT_COLUMNS))
