// Jobs: the queue and the history, newest first, with filters that live in
// the URL (/jobs?state=failed&verdict=regression) so a filtered list can be
// pasted. While a listed job is queued or running the list refreshes itself.
import { api } from './api.js';
import { esc, DASH, timeHtml, duration, ago, verdictHtml, stateHtml, patchSource, patchName } from './util.js';

const LIMIT = 50;
const REFRESH_MS = 3000;
const IDLE_MS = 15000;
const STATES = ['queued', 'running', 'done', 'failed', 'cancelled'];
const VERDICTS = ['regression', 'improvement', 'changed', 'inconclusive', 'same', 'unavailable'];
const FILTERS = ['state', 'verdict', 'tree', 'submitter', 'suite'];

function options(list, sel) {
	return list.map((v) => `<option value="${esc(v)}"${v === sel ? ' selected' : ''}>${esc(v)}</option>`).join('');
}

function stageText(j) {
	if (j.state === 'failed' && j.error) {
		return `<span class="fail" title="${esc(j.error.message || '')}">${esc(j.stage || 'stage')} failed</span> <span class="muted">(${esc(j.error.class)})</span>`;
	}
	if (!j.stage) return `<span class="muted">${DASH}</span>`;
	if (j.state === 'running') return `<span class="running-dot" aria-hidden="true"></span>${esc(j.stage)}`;
	if (j.state === 'queued') return `<span class="muted">waiting: ${esc(j.stage)}</span>`;
	return esc(j.stage);
}

function jobRow(j, now) {
	const took = j.started && (j.finished || (j.state === 'running' ? now : null));
	const what = j.kind === 'ab'
		? `${esc(j.tree || '?')} ${esc(j.base || '')} <span class="muted">+</span> <span class="patch" title="${esc(patchSource(j))}">${esc(patchName(j))}</span>`
		: `<span class="muted">as is</span>`;
	return `<tr data-job="${esc(j.id)}" data-state="${esc(j.state)}">` +
		`<td class="num"><a href="/jobs/${esc(j.id)}" data-row-link>#${esc(j.id)}</a></td>` +
		`<td class="c-state">${stateHtml(j.state)}</td>` +
		`<td class="c-stage">${stageText(j)}</td>` +
		`<td class="c-verdict">${verdictHtml(j.verdict)}</td>` +
		`<td>${esc(j.suite)}</td>` +
		`<td class="wrap">${what}</td>` +
		`<td>${esc(j.submitter || DASH)}</td>` +
		`<td class="wrap">${esc((j.machines || []).join(', ') || (j.tags || []).map((t) => 'tag:' + t).join(', ') || 'any')}</td>` +
		`<td title="${esc(ago(j.created, now))}">${timeHtml(j.created)}</td>` +
		`<td class="num">${took ? duration(took - j.started) : DASH}</td>` +
		'</tr>';
}

export async function render(ctx) {
	const q = ctx.query;
	const f = {};
	for (const k of FILTERS) if (q.get(k)) f[k] = q.get(k);
	const offset = Math.max(0, parseInt(q.get('offset') || '0', 10) || 0);
	ctx.title('jobs');

	const params = new URLSearchParams(f);
	params.set('limit', String(LIMIT));
	if (offset) params.set('offset', String(offset));
	const path = '/jobs?' + params.toString();

	ctx.main.innerHTML = `
<h1>Jobs</h1>
<form class="filters" role="search" aria-label="Filter jobs">
  <label>State <select name="state"><option value="">any</option>${options(STATES, f.state)}</select></label>
  <label>Verdict <select name="verdict"><option value="">any</option>${options(VERDICTS, f.verdict)}</select></label>
  <label>Tree <input name="tree" value="${esc(f.tree || '')}" list="dl-tree" size="10" autocomplete="off"></label>
  <label>Submitter <input name="submitter" value="${esc(f.submitter || '')}" list="dl-submitter" size="10" autocomplete="off" data-filter></label>
  <label>Suite <input name="suite" value="${esc(f.suite || '')}" list="dl-suite" size="8" autocomplete="off"></label>
  <button type="submit">Filter</button>
  ${Object.keys(f).length ? '<a href="/jobs">clear filters</a>' : ''}
  <datalist id="dl-tree"></datalist><datalist id="dl-submitter"></datalist><datalist id="dl-suite"></datalist>
</form>
<p class="status-line"><span id="jobs-count" class="muted">Loading…</span> <span id="jobs-refresh" class="muted" aria-live="polite"></span></p>
<div class="table-wrap">
<table class="data jobs" id="jobs-table">
  <thead><tr><th scope="col">Job</th><th scope="col">State</th><th scope="col">Stage</th><th scope="col">Verdict</th>
  <th scope="col">Suite</th><th scope="col">What</th><th scope="col">Submitter</th><th scope="col">Machines</th>
  <th scope="col">Created</th><th scope="col">Took</th></tr></thead>
  <tbody></tbody>
</table>
</div>
<nav class="pager" aria-label="Pages of jobs"></nav>`;

	const form = ctx.main.querySelector('form');
	form.addEventListener('submit', (ev) => {
		ev.preventDefault();
		const p = new URLSearchParams();
		for (const k of FILTERS) {
			const v = form.elements[k].value.trim();
			if (v) p.set(k, v);
		}
		ctx.navigate('/jobs' + (p.toString() ? '?' + p : ''));
	});
	for (const s of form.querySelectorAll('select')) s.addEventListener('change', () => form.requestSubmit());

	const tbody = ctx.main.querySelector('tbody');
	const seen = { tree: new Set(), submitter: new Set(), suite: new Set() };

	const draw = (data) => {
		const now = Date.now() / 1000;
		const focusedId = document.activeElement?.closest?.('tr[data-job]')?.dataset.job;
		tbody.innerHTML = data.jobs.length
			? data.jobs.map((j) => jobRow(j, now)).join('')
			: `<tr><td colspan="10" class="empty">No jobs${Object.keys(f).length ? ' match these filters' : ' yet: <a href="/submit">submit one</a>'}.</td></tr>`;
		if (focusedId) tbody.querySelector(`tr[data-job="${CSS.escape(focusedId)}"] a`)?.focus();
		const first = data.total ? data.offset + 1 : 0, last = data.offset + data.jobs.length;
		ctx.main.querySelector('#jobs-count').textContent = `${first}\u2013${last} of ${data.total} jobs`;
		for (const j of data.jobs)
			for (const k of Object.keys(seen)) if (j[k]) seen[k].add(j[k]);
		for (const k of Object.keys(seen))
			ctx.main.querySelector('#dl-' + k).innerHTML = [...seen[k]].sort().map((v) => `<option value="${esc(v)}">`).join('');
		const pager = ctx.main.querySelector('.pager');
		const link = (o, label, rel) => {
			const p = new URLSearchParams(f);
			if (o) p.set('offset', String(o));
			return `<a href="/jobs${p.toString() ? '?' + p : ''}" rel="${rel}">${label}</a>`;
		};
		pager.innerHTML = (data.offset > 0 ? link(Math.max(0, data.offset - LIMIT), '\u2190 newer', 'prev') : '') +
			(last < data.total ? ' ' + link(last, 'older \u2192', 'next') : '');
		return data.jobs.some((j) => j.state === 'queued' || j.state === 'running');
	};

	const load = () => api(path, { signal: ctx.signal });
	let active = draw(await load());
	const note = ctx.main.querySelector('#jobs-refresh');
	const setNote = () => {
		note.textContent = active ? `\u00b7 refreshing every ${REFRESH_MS / 1000} s while jobs are queued or running ` +
			`(updated ${new Date().toLocaleTimeString()})` : '';
	};
	setNote();
	// While a listed job is queued or running the list reloads every few
	// seconds; when none is, a cheap look at /health every IDLE_MS notices
	// a job submitted elsewhere.
	let idleTicks = 0;
	ctx.every(REFRESH_MS, async () => {
		if (!active) {
			if (++idleTicks * REFRESH_MS < IDLE_MS) return true;
			idleTicks = 0;
			const h = await api('/health', { signal: ctx.signal });
			if (!h.jobs || !(h.jobs.queued + h.jobs.running)) return true;
		}
		active = draw(await load());
		setNote();
		return true;
	});
}
