// Machines: health, the job each one runs, last boot and kernel, recent
// failures. An operator with a token can take a machine out (maintenance)
// or put it back.
import { api, storedToken } from './api.js';
import { esc, DASH, timeHtml, ago, healthHtml, jobLink } from './util.js';

const REFRESH_MS = 5000;

function failuresHtml(list) {
	if (!list || !list.length) return `<span class="muted">none</span>`;
	return '<ul class="failures">' + list.map((f) =>
		`<li>${jobLink(f.job)} <span class="badge s-failed">${esc(f.class || '?')}</span> ${esc(f.message || '')} <span class="muted">(${ago(f.at)})</span></li>`).join('') + '</ul>';
}

function rowHtml(m) {
	const busy = m.leased_by !== null && m.leased_by !== undefined;
	const action = m.health === 'maintenance'
		? `<button type="button" data-health="unknown" data-machine="${esc(m.name)}">Put back</button>`
		: `<button type="button" data-health="maintenance" data-machine="${esc(m.name)}">Take out</button>`;
	return `<tr data-machine="${esc(m.name)}">` +
		`<th scope="row"><span id="m-${esc(m.name)}" tabindex="-1" data-row-link>${esc(m.name)}</span></th>` +
		`<td>${healthHtml(m.health)}${m.health_reason ? `<div class="small muted reason">${esc(m.health_reason)}</div>` : ''}${m.health_changed ? `<div class="small muted">since ${timeHtml(m.health_changed)}</div>` : ''}</td>` +
		`<td>${busy ? `${jobLink(m.leased_by)} <span class="muted">stage id ${esc(m.stage ?? "?")}</span>` : '<span class="muted">idle</span>'}</td>` +
		`<td>${esc(m.transport)}${m.host ? ` <code>${esc(m.host)}</code>` : ''}<div class="small muted">boot: ${esc(m.boot)}</div></td>` +
		`<td>${esc(m.arch || DASH)} \u00b7 ${m.cpus ?? '?'} CPUs${m.tags && m.tags.length ? `<div class="small muted">${m.tags.map(esc).join(', ')}</div>` : ''}</td>` +
		`<td>${m.kernel ? `<code>${esc(m.kernel)}</code>` : DASH}</td>` +
		`<td>${timeHtml(m.last_boot)}</td>` +
		`<td class="wrap">${failuresHtml(m.recent_failures)}</td>` +
		`<td>${action}</td></tr>`;
}

export async function render(ctx) {
	ctx.title('machines');
	ctx.main.innerHTML = `<h1>Machines</h1>
<p class="status-line muted" id="m-count">Loading\u2026</p>
<div class="table-wrap"><table class="data machines" id="machines-table">
<thead><tr><th scope="col">Machine</th><th scope="col">Health</th><th scope="col">Current job</th><th scope="col">Transport</th>
<th scope="col">Arch</th><th scope="col">Kernel</th><th scope="col">Last boot</th><th scope="col">Recent failures</th><th scope="col"><span class="sr-only">Action</span></th></tr></thead>
<tbody></tbody></table></div>
<p class="small muted">Taking a machine out (maintenance) keeps new stages off it; putting it back runs a health check before its next job. Both need a token (set on the Submit page).</p>`;
	const tbody = ctx.main.querySelector('tbody');
	const draw = (d) => {
		tbody.innerHTML = d.machines.length ? d.machines.map(rowHtml).join('')
			: '<tr><td colspan="9" class="empty">No machines in the configuration.</td></tr>';
		const busy = d.machines.filter((m) => m.leased_by !== null && m.leased_by !== undefined).length;
		ctx.main.querySelector('#m-count').textContent = `${d.machines.length} machines, ${busy} busy \u00b7 refreshed every ${REFRESH_MS / 1000} s`;
	};
	draw(await api('/machines', { signal: ctx.signal }));
	tbody.addEventListener('click', async (ev) => {
		const b = ev.target.closest('button[data-health]');
		if (!b) return;
		if (!storedToken()) {
			ctx.error(new Error('changing a machine needs a token: set it on the Submit page'));
			return;
		}
		b.disabled = true;
		try {
			const body = { health: b.dataset.health, reason: b.dataset.health === 'maintenance' ? 'taken out from the dashboard' : 'put back from the dashboard' };
			draw(await api(`/machines/${encodeURIComponent(b.dataset.machine)}/health`, { method: 'POST', body, signal: ctx.signal }));
		} catch (e) {
			b.disabled = false;
			ctx.error(e, 'machine health');
		}
	});
	ctx.every(REFRESH_MS, async () => {
		draw(await api('/machines', { signal: ctx.signal }));
	});
}
