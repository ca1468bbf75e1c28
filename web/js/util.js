// Formatting helpers shared by the pages. Everything that ends up in
// innerHTML goes through esc().

const ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function esc(s) {
	return s === null || s === undefined ? '' : String(s).replace(/[&<>"']/g, (c) => ESC[c]);
}

export const DASH = '\u2013';

// A number with about 4 significant digits, thousands separated; null is a dash.
export function num(v) {
	if (v === null || v === undefined || Number.isNaN(v)) return DASH;
	const a = Math.abs(v);
	if (a !== 0 && (a >= 1e9 || a < 1e-3)) return v.toExponential(2);
	const digits = a >= 1000 ? 0 : a >= 100 ? 1 : a >= 1 ? 2 : 3;
	return NUMBER_FORMATS[digits].format(v);
}

// toLocaleString builds a formatter per call: a 500-row table pays for
// thousands of them, so the four formatters num() needs are made once.
const NUMBER_FORMATS = [0, 1, 2, 3].map((d) => new Intl.NumberFormat('en-US', { maximumFractionDigits: d }));

export function pct(v, digits = 1) {
	if (v === null || v === undefined || Number.isNaN(v)) return DASH;
	const s = Math.abs(v) >= 1000 ? v.toExponential(1) : v.toFixed(digits);
	return (v > 0 ? '+' : v < 0 ? '' : '\u00b1') + s + '%';
}

export function pval(p) {
	if (p === null || p === undefined) return DASH;
	if (p < 0.001) return p.toExponential(1);
	return p.toFixed(3);
}

export function ci(c) {
	if (!Array.isArray(c)) return DASH;
	return '[' + pct(c[0]) + ', ' + pct(c[1]) + ']';
}

function pad(n) {
	return String(n).padStart(2, '0');
}

// Epoch seconds as local "YYYY-MM-DD HH:MM:SS".
export function time(epoch) {
	if (epoch === null || epoch === undefined) return DASH;
	const d = new Date(epoch * 1000);
	return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
		`${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

export function iso(epoch) {
	return epoch === null || epoch === undefined ? '' : new Date(epoch * 1000).toISOString();
}

// A <time> element: local time shown, UTC ISO in the title.
export function timeHtml(epoch) {
	if (epoch === null || epoch === undefined) return DASH;
	return `<time datetime="${iso(epoch)}" title="${iso(epoch)}">${time(epoch)}</time>`;
}

export function duration(s) {
	if (s === null || s === undefined || s < 0) return DASH;
	if (s < 1) return s.toFixed(2) + ' s';
	if (s < 60) return s.toFixed(s < 10 ? 1 : 0) + ' s';
	const m = Math.floor(s / 60), sec = Math.round(s % 60);
	if (m < 60) return `${m} min ${sec} s`;
	return `${Math.floor(m / 60)} h ${m % 60} min`;
}

export function ago(epoch, now = Date.now() / 1000) {
	if (epoch === null || epoch === undefined) return DASH;
	const d = now - epoch;
	if (d < 0) return 'now';
	if (d < 60) return Math.round(d) + ' s ago';
	if (d < 3600) return Math.round(d / 60) + ' min ago';
	if (d < 86400 * 2) return Math.round(d / 3600) + ' h ago';
	return Math.round(d / 86400) + ' days ago';
}

// A verdict badge: colour plus a mark (app.css, .v-*::before) and the word,
// never colour alone. One element per badge: a 500-row table has 500.
export function verdictHtml(v) {
	if (!v) return `<span class="muted">${DASH}</span>`;
	return `<span class="badge v-${esc(v)}">${esc(v)}</span>`;
}

export function stateHtml(s) {
	return `<span class="badge s-${esc(s)}">${esc(s)}</span>`;
}

export function healthHtml(h) {
	return `<span class="badge h-${esc(h)}">${esc(h)}</span>`;
}

export function jobLink(id) {
	return id === null || id === undefined ? DASH : `<a href="/jobs/${encodeURIComponent(id)}">#${esc(id)}</a>`;
}

export function median(xs) {
	const v = xs.filter((x) => x !== null && Number.isFinite(x)).sort((a, b) => a - b);
	if (!v.length) return null;
	const m = v.length >> 1;
	return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// Where the patch of an A/B job came from, in words.
export function patchSource(job) {
	if (job.kind !== 'ab') return 'the suite on machines as they are';
	if (job.patch_kind === 'branch') return `branch ${job.patch_url || '?'} ${job.patch_ref || ''}`.trim();
	if (job.patch_kind === 'url') return `mbox ${job.patch_url || '?'}`;
	if (job.patch_kind === 'patch') return 'a pasted patch';
	return job.patch_kind || 'patch';
}

// What to call the patch of an A/B job: its subject (the daemon keeps one
// since schema 6: the mail's Subject:, a diff's first line or the files it
// touches, "branch REF of URL"), else where it came from. Untrusted text:
// callers put it through esc().
export function patchName(job) {
	return job.kind === 'ab' && job.patch_subject ? job.patch_subject : patchSource(job);
}
