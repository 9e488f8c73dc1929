/**
 * The tab's badge: the count of pending requests in the title and as a dot on the favicon, so a pinned or
 * background tab still says how many wait. Pure: the view sets `document.title` and the icon's href.
 */

export const APP_TITLE = 'Tollgate inbox';

/** "(3) Tollgate inbox", or the bare title when nothing waits. */
export function pageTitle(count: number): string {
  return count > 0 ? `(${count}) ${APP_TITLE}` : APP_TITLE;
}

/** What fits in the dot: 1–9, 10–99, then "99+". */
export function badgeText(count: number): string {
  return count > 99 ? '99+' : String(count);
}

/**
 * The favicon (a 32×32 SVG) with a red dot carrying the count in its top-right corner, as SVG text; the caller
 * makes it a `data:` URL (the page's CSP allows `img-src data:`). No canvas: the icon stays sharp at any size.
 */
export function badgedIcon(svg: string, count: number): string {
  if (count <= 0) return svg;
  const text = badgeText(count);
  const size = text.length === 1 ? 14 : text.length === 2 ? 11 : 8;
  const dot =
    `<circle cx="22" cy="10" r="10" fill="#dc2626" stroke="#fff" stroke-width="1.5"/>` +
    `<text x="22" y="10" dy="0.36em" text-anchor="middle" font-family="system-ui,sans-serif" font-weight="700" font-size="${size}" fill="#fff">${text}</text>`;
  return svg.replace(/<\/svg>\s*$/, `${dot}</svg>`);
}

export const svgDataUrl = (svg: string): string => `data:image/svg+xml,${encodeURIComponent(svg)}`;
