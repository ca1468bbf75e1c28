// The dashboard's shell: a router over stable URLs (/jobs, /jobs/12,
// /machines, /submit, /tracks, /bisections; tlblabd serves index.html for each), the
// error banner, and the keyboard shortcuts. Each page is a module whose
// render(ctx) fills ctx.main; a navigation aborts the previous page's
// requests and timers through ctx.signal and ctx.cleanup.
import { api, ApiError } from './api.js';
import { esc } from './util.js';
// a page's module is loaded when it is first visited (index.html preloads
// the ones most visits start on)
const routes = [
	[/^\/(?:jobs\/?)?$/, () => import('./jobs.js'), 'jobs'],
	[/^\/jobs\/(\d+)\/?$/, () => import('./job.js'), 'jobs'],
	[/^\/machines\/?$/, () => import('./machines.js'), 'machines'],
	[/^\/submit\/?$/, () => import('./submit.js'), 'submit'],
	[/^\/tracks\/?$/, () => import('./tracks.js'), 'tracks'],
	[/^\/tracks\/([A-Za-z0-9._-]+)\/?$/, () => import('./tracks.js'), 'tracks'],
	[/^\/series\/()(\d+)\/?$/, () => import('./tracks.js'), 'tracks'],
	[/^\/bisections\/?$/, () => import('./bisect.js'), 'bisections'],
	[/^\/bisections\/(\d+)\/?$/, () => import('./bisect.js'), 'bisections'],
];

const main = document.getElementById('main');
const banner = document.getElementById('banner');
let current = null;	// { ctrl, cleanups }
let first = true;

// Shows an error in the banner: the HTTP status, the API's code and
// message, and the request. The same error is shown once.
export function showError(err, what) {
	if (err && err.name === 'AbortError') return;
	let head, detail = '';
	if (err instanceof ApiError) {
		head = err.status ? `HTTP ${err.status} ${err.code}` : 'Network error';
		detail = `${err.method} ${err.path}`;
	} else {
		head = 'Error';
		console.error(err);
	}
	const msg = err && err.message ? err.message : String(err);
	const key = head + '|' + msg + '|' + detail;
	for (const el of banner.children)
		if (el.dataset.key === key) return;
	const div = document.createElement('div');
	div.className = 'error';
	div.setAttribute('role', 'alert');
	div.dataset.key = key;
	if (err instanceof ApiError) div.dataset.status = String(err.status);
	div.innerHTML = `<strong>${esc(head)}</strong>: <span class="msg">${esc(msg)}</span>` +
		(what ? ` <span class="muted">(${esc(what)})</span>` : '') +
		(detail ? ` <code>${esc(detail)}</code>` : '') +
		' <button type="button" class="dismiss" aria-label="Dismiss this error">\u00d7</button>';
	div.querySelector('button').addEventListener('click', () => div.remove());
	banner.appendChild(div);
}

export function clearErrors() {
	banner.textContent = '';
}

export function navigate(url, replace = false) {
	if (replace) history.replaceState(null, '', url);
	else history.pushState(null, '', url);
	route();
}

async function route() {
	if (current) {
		current.ctrl.abort();
		for (const f of current.cleanups) {
			try {
				f();
			} catch (e) {
				console.error(e);
			}
		}
	}
	clearErrors();
	const path = location.pathname;
	let page = null, m = null, nav = '';
	for (const [re, mod, n] of routes) {
		m = path.match(re);
		if (m) {
			page = mod;
			nav = n;
			break;
		}
	}
	for (const a of document.querySelectorAll('[data-nav]')) {
		if (a.dataset.nav === nav) a.setAttribute('aria-current', 'page');
		else a.removeAttribute('aria-current');
	}
	const ctrl = new AbortController();
	const cleanups = [];
	current = { ctrl, cleanups };
	const ctx = {
		main,
		params: m ? m.slice(1) : [],
		query: new URLSearchParams(location.search),
		signal: ctrl.signal,
		cleanup: (f) => cleanups.push(f),
		// runs f every ms until the page is left; f returning false stops it
		every(ms, f) {
			let t = null;
			const tick = async () => {
				if (ctrl.signal.aborted) return;
				let again = true;
				try {
					again = (await f()) !== false;
				} catch (e) {
					showError(e, 'auto-refresh');
				}
				if (again && !ctrl.signal.aborted) t = setTimeout(tick, ms);
			};
			t = setTimeout(tick, ms);
			cleanups.push(() => clearTimeout(t));
		},
		error: showError,
		clearErrors,
		navigate,
		title(t) {
			document.title = t ? `${t} \u00b7 tlblab` : 'tlblab';
		},
	};
	if (!page) {
		ctx.title('not found');
		main.innerHTML = `<h1 tabindex="-1">No such page</h1><p>${esc(path)} is not a page of the dashboard. ` +
			'See the <a href="/jobs">jobs</a>.</p>';
		return;
	}
	// a job page's first request starts before its module is even loaded
	const jm = path.match(/^\/jobs\/(\d+)\/?$/);
	if (jm) {
		ctx.prefetched = api(`/jobs/${jm[1]}`, { signal: ctrl.signal });
		ctx.prefetched.catch(() => {});	// the page reports it when it awaits it
	}
	try {
		const mod = await page();
		if (ctrl.signal.aborted) return;
		await mod.render(ctx);
		performance.mark('tlblab:page-rendered');
	} catch (e) {
		if (e.name === 'AbortError' || ctrl.signal.aborted) return;
		showError(e);
		if (!main.querySelector('h1'))
			main.innerHTML = '<h1 tabindex="-1">Could not load this page</h1><p>The error is shown above.</p>';
	}
	if (!first && !ctrl.signal.aborted && !location.hash) {
		// after an in-app navigation, keyboard and screen reader users start at the heading
		const h = main.querySelector('h1');
		if (h) {
			if (!h.hasAttribute('tabindex')) h.setAttribute('tabindex', '-1');
			h.focus({ preventScroll: true });
		}
		window.scrollTo(0, 0);
	}
	first = false;
	if (location.hash) {
		const el = document.getElementById(location.hash.slice(1));
		if (el) el.scrollIntoView();
	}
}

// Same-origin links to pages are handled here; /api/ links (JSON, logs)
// and modified clicks go to the browser.
document.addEventListener('click', (ev) => {
	if (ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
	const a = ev.target.closest('a[href]');
	if (!a || a.target || a.hasAttribute('download')) return;
	const url = new URL(a.href, location.href);
	if (url.origin !== location.origin || url.pathname.startsWith('/api/')) return;
	if (url.pathname === location.pathname && url.search === location.search && url.hash) return;
	ev.preventDefault();
	navigate(url.pathname + url.search + url.hash);
});
window.addEventListener('popstate', route);

// Keyboard: "/" focuses the page's filter, j/k walk the rows of the main
// table, "g j|m|s" go to a page, "?" shows the help.
let pendingG = 0;
document.addEventListener('keydown', (ev) => {
	if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
	const t = ev.target;
	if (t.closest && t.closest('input, textarea, select, [contenteditable], dialog')) {
		if (ev.key === 'Escape' && t.blur && !t.closest('dialog')) t.blur();
		return;
	}
	const now = Date.now();
	if (pendingG && now - pendingG < 1500) {
		pendingG = 0;
		const to = { j: '/jobs', m: '/machines', s: '/submit', t: '/tracks', b: '/bisections' }[ev.key];
		if (to) {
			ev.preventDefault();
			navigate(to);
		}
		return;
	}
	switch (ev.key) {
	case 'g':
		pendingG = now;
		return;
	case '/': {
		const f = main.querySelector('[data-filter]');
		if (f) {
			ev.preventDefault();
			f.focus();
			if (f.select) f.select();
		}
		return;
	}
	case 'j':
	case 'k': {
		const links = [...main.querySelectorAll('[data-row-link]')].filter((a) => a.offsetParent !== null);
		if (!links.length) return;
		ev.preventDefault();
		let i = links.indexOf(document.activeElement);
		i = i < 0 ? 0 : Math.max(0, Math.min(links.length - 1, i + (ev.key === 'j' ? 1 : -1)));
		links[i].focus();
		links[i].closest('tr')?.scrollIntoView({ block: 'nearest' });
		return;
	}
	case 'u': {
		const b = main.querySelector('[data-fold-toggle]');
		if (b) {
			ev.preventDefault();
			b.click();
		}
		return;
	}
	case '?':
		ev.preventDefault();
		document.getElementById('keys').showModal();
	}
});
document.getElementById('keys-help').addEventListener('click', () => document.getElementById('keys').showModal());

// The header's one-line lab status.
export async function refreshHealth() {
	const el = document.getElementById('health');
	try {
		const h = await api('/health');
		const m = h.machines || {};
		el.textContent = `${h.jobs.running} running, ${h.jobs.queued} queued \u00b7 machines: ` +
			`${m.good} good, ${m.unknown} unknown, ${m.bad} bad, ${m.maintenance} maintenance`;
		el.title = `tlblabd ${h.version}`;
	} catch (e) {
		el.textContent = 'tlblabd unreachable';
		showError(e, 'lab status');
	}
}

// the lab's status line waits for the first page: that page's requests go first
route().then(refreshHealth);
