// A job: a per-patch series' steps (when it is one of one), verdict summary, the comparison table (comparison.js: a line a
// row, headline and changed rows first), a chart per thread sweep, TLB
// shootdowns per second over the run, the profile diff, the stages with
// their logs, provenance.
//
// Order matters for speed: the job and its comparison are fetched, the
// summary and the table go into the DOM with one innerHTML each (the mark
// "tlblab:table-rendered" is set then, make bench measures it), and only
// then are uPlot, the samples and the logs loaded.
import { api, storedToken } from './api.js';
import {
	esc, DASH, num, pct, pval, ci, timeHtml, duration, verdictHtml, stateHtml, patchSource, patchName, median,
} from './util.js';
import { sweepChart, shootdownChart } from './charts.js';
import { comparisonSection, wireComparison, shortParams, classTitles } from './comparison.js';

const REFRESH_MS = 3000;
const SHOOTDOWN_NAMES = ['interrupts.TLB', 'vmstat.nr_tlb_remote_flush_received', 'tlb_flush.remote_shootdown'];
const EXCERPT_RE = /\berror\b|kernel panic|\bbug:|\boops\b|fatal|does not apply|segmentation fault|timed? ?out|\bfailed\b|not found|refused/i;

// ---- summary ----

// What each class saw, in words (the comparison's by_class), each class's
// legend in its title
function byClass(cmp) {
	const bc = cmp.by_class, titles = classTitles(cmp);
	if (!bc) return '';
	const items = Object.entries(bc).filter(([, c]) => c && c.verdict !== 'unavailable');
	if (!items.length) return '';
	return '<ul class="by-class">' + items.map(([name, c]) =>
		`<li><span class="cls cls-${esc(name)}" title="${esc(titles[name] || name)}">${esc(name)}</span> ` +
		`${verdictHtml(c.verdict)} ${esc(c.text)}</li>`).join('') + '</ul>';
}

// "a change must be at least 1% (work), 5% (wait), 2% (time; 5% for
// counters)...": each tested class's margins, from the API's rules.classes
function leastChanges(r) {
	const p = (x) => `${+(x * 100).toPrecision(3)}%`;
	const tested = Array.isArray(r.classes) ? r.classes.filter((c) => c.tested && c.margins) : [];
	if (!tested.length)
		return `a change must be at least ${p(r.min_change_headline)} (headline) or ${p(r.min_change_counter)} (counters); ` +
			`same when the equivalence interval lies within \u00b1${p(r.same_band)}`;
	const least = tested.map((c) => {
		const m = c.margins;
		return `${p(m.min_change)} (${esc(c.name)}${m.min_change_counter !== m.min_change ? `; ${p(m.min_change_counter)} for counters` : ''})`;
	});
	const bands = tested.filter((c) => c.margins.same_band > c.margins.min_change)
		.map((c) => `\u00b1${p(c.margins.same_band)} for ${esc(c.name)}`);
	return `a change must be at least ${least.join(', ')}; same when the equivalence interval lies within that least change` +
		(bands.length ? ` (within only ${bands.join(', ')}: no change beyond it)` : '');
}

function overall(job, cmp) {
	if (job.verdict) return job.verdict;
	const s = cmp.summary;
	if (s.regressions.length) return 'regression';
	if (s.improvements.length) return 'improvement';
	if (s.inconclusive) return 'inconclusive';
	return 'same';
}

function entryList(title, list, cls) {
	if (!list.length) return '';
	return `<div class="entries ${cls}"><h3>${title} <span class="muted">(${list.length})</span></h3><ul>` +
		list.map((e) => `<li>${verdictHtml(e.verdict)} <strong>${esc(e.metric)}</strong> ${pct(e.change_pct)} ` +
			`<span class="muted">${esc(e.workload)} ${esc(paramsText(e.params))} \u00b7 CI ${ci(e.ci)} \u00b7 p ${pval(e.p)}</span></li>`).join('') +
		'</ul></div>';
}

function paramsText(p) {
	if (!p || typeof p !== 'object') return '';
	return Object.keys(p).sort().filter((k) => k !== 'workload').map((k) => `${k}=${typeof p[k] === 'object' ? JSON.stringify(p[k]) : p[k]}`).join(' ');
}

function summarySection(job, cmp) {
	const s = cmp.summary, v = overall(job, cmp);
	const failed = cmp.failed && cmp.failed.length
		? `<div class="notice warn"><strong>${cmp.failed.length} failed ${cmp.failed.length === 1 ? 'part' : 'parts'}, never averaged in:</strong><ul>` +
			cmp.failed.slice(0, 20).map((f) => `<li>${esc(f.side)}${f.workload ? ' ' + esc(f.workload) : ''}${f.run ? ' run ' + esc(f.run) : ''}: ${esc(typeof f.reason === 'string' ? f.reason : JSON.stringify(f.reason))}</li>`).join('') + '</ul></div>'
		: '';
	const notes = cmp.notes && cmp.notes.length ? '<ul class="notes">' + cmp.notes.map((n) => `<li>${esc(n)}</li>`).join('') + '</ul>' : '';
	return `
<section id="summary" class="summary v-${esc(v)}-box" aria-labelledby="h-summary">
<h2 id="h-summary">Verdict: ${verdictHtml(v)}</h2>
<p class="summary-text">${esc(s.text)}</p>
<dl class="counts">
  <div><dt>regressions</dt><dd data-count="regressions">${s.regressions.length}</dd></div>
  <div><dt>improvements</dt><dd data-count="improvements">${s.improvements.length}</dd></div>
  <div><dt>changed (neutral)</dt><dd data-count="changed">${s.changed.length}</dd></div>
  <div><dt>inconclusive</dt><dd data-count="inconclusive">${s.inconclusive}</dd></div>
  <div><dt>same</dt><dd data-count="same">${s.same}</dd></div>
  <div><dt>unavailable</dt><dd data-count="unavailable">${s.unavailable}</dd></div>
  <div><dt>counters</dt><dd>${s.counters.regressions} worse, ${s.counters.improvements} better, ${s.counters.changed} changed</dd></div>
</dl>
${byClass(cmp)}
${entryList('Regressions (headline)', s.regressions, 'reg')}
${entryList('Improvements (headline)', s.improvements, 'imp')}
${entryList('Changed (neutral headline)', s.changed, 'chg')}
${failed}${notes}
</section>`;
}

// ---- sweeps, TLB, profile ----

// What a sweep's x is: the workers of a thread sweep, or the guest's vCPUs
// of a suite's guest_cpus (the comparison's "axis").
export const AXIS_LABEL = { workers: 'workers', cpus: 'vCPUs' };
const axisLabel = (sw) => AXIS_LABEL[sw.axis] || 'workers';

function sweepsSection(cmp) {
	if (!cmp.sweeps.length) return '';
	const threads = cmp.sweeps.filter((sw) => sw.axis !== 'cpus').length;
	const title = threads === cmp.sweeps.length ? 'Thread sweeps' : threads ? 'Thread and CPU sweeps' : 'CPU sweeps';
	return `<section id="sweeps" aria-labelledby="h-sweeps"><h2 id="h-sweeps">${title} <span class="muted small">${cmp.sweeps.length}</span></h2>
<p class="muted small">Median over boots per side; the band is \u00b1 the spread (stddev over boots). Base: solid line; patched: dashed. A CPU sweep's
points are the suite's guest_cpus, each its own boots and its own verdict (the table below each chart).</p>
<div class="charts">` + cmp.sweeps.map((sw, i) => `
<figure class="chart-box" id="sweep-${i}" data-axis="${esc(sw.axis || 'workers')}">
<figcaption><strong>${esc(sw.metric)}</strong> vs ${axisLabel(sw)} <span class="muted">${esc(sw.workload)} ${esc(shortParams(sw.params_text))} \u00b7 ${esc(sw.unit || '')} \u00b7 ${esc(sw.direction)} is ${sw.direction === 'neutral' ? 'neither' : 'better'}</span></figcaption>
<div class="chart" data-sweep="${i}" role="img" aria-label="${esc(sw.metric)} against ${axisLabel(sw)}, base and patched"></div>
<table class="data small sweep"><thead><tr><th scope="col">${axisLabel(sw)}</th><th scope="col">base</th><th scope="col">patched</th><th scope="col">change</th><th scope="col">verdict</th></tr></thead><tbody>` +
		sw.rows.map((r) => `<tr class="r-${esc(r.verdict)}"><td class="num">${r.x ?? r.workers}</td><td class="num">${num(r.base)}</td><td class="num">${num(r.patched)}</td><td class="num">${pct(r.change_pct)}</td><td>${verdictHtml(r.verdict)}</td></tr>`).join('') +
		'</tbody></table></figure>').join('') + '</div></section>';
}

function rates(r) {
	return `${num(r.per_sec)} <span class="muted">peak ${num(r.peak_per_sec)}</span>`;
}

function tlbSection(cmp) {
	const rows = [];
	for (const t of cmp.tlb) {
		const spk = t.shootdowns_per_kop;
		if (spk) {
			rows.push(`<tr class="r-${esc(spk.verdict)}"><td>${esc(t.workload)}</td><td class="params">${esc(shortParams(t.params_text))}</td><td>shootdowns per 1000 ops</td>` +
				`<td class="num">${num(spk.base)}</td><td class="num">${num(spk.patched)}</td><td class="num">${pct(spk.change_pct)}</td><td>${verdictHtml(spk.verdict)}</td></tr>`);
		}
		for (const c of t.counters) {
			rows.push(`<tr class="r-${esc(c.verdict || 'none')}"><td>${esc(t.workload)}</td><td class="params">${esc(shortParams(t.params_text))}</td><td>${esc(c.name)} per second</td>` +
				`<td class="num">${rates(c.base)}</td><td class="num">${rates(c.patched)}</td><td class="num">${pct(c.base.per_sec ? (c.patched.per_sec / c.base.per_sec - 1) * 100 : null)}</td><td>${verdictHtml(c.verdict)}</td></tr>`);
		}
	}
	const table = rows.length ? `<div class="table-wrap"><table class="data small" id="tlb-table"><thead><tr><th scope="col">Workload</th><th scope="col">Params</th><th scope="col">What</th><th scope="col">Base</th><th scope="col">Patched</th><th scope="col">Change</th><th scope="col">Verdict</th></tr></thead><tbody>${rows.join('')}</tbody></table></div>` : '';
	return `<section id="tlb" aria-labelledby="h-tlb"><h2 id="h-tlb">TLB shootdowns</h2>${tlbFigure()}${table}</section>`;
}

function tlbFigure() {
	return `<figure class="chart-box wide"><figcaption id="tlb-caption" class="muted">Loading per-second samples\u2026</figcaption>
<div class="chart" id="tlb-chart" role="img" aria-labelledby="tlb-caption"></div></figure>`;
}

function profileSection(cmp) {
	const d = cmp.profile_diff;
	if (!d || (!d.profiles.base && !d.profiles.patched))
		return '<section id="profile" aria-labelledby="h-profile"><h2 id="h-profile">Profile diff</h2><p class="muted">No profiles were recorded (the suite did not ask for <code>profile</code>, or perf was missing).</p></section>';
	const max = Math.max(1e-9, ...d.symbols.map((s) => Math.abs(s.delta)));
	return `<section id="profile" aria-labelledby="h-profile"><h2 id="h-profile">Profile diff <span class="muted small">self %, averaged over ${d.profiles.base} base and ${d.profiles.patched} patched profiles; largest changes first</span></h2>
<div class="table-wrap"><table class="data small" id="profile-table"><thead><tr><th scope="col">Symbol</th><th scope="col">Base</th><th scope="col">Patched</th><th scope="col">Delta</th><th scope="col" class="bar-col"><span class="sr-only">bar</span></th></tr></thead><tbody>` +
		d.symbols.map((s) => {
			const w = (Math.abs(s.delta) / max * 100).toFixed(1);
			const dir = s.delta > 0 ? 'up' : 'down';
			return `<tr><td class="sym">${esc(s.symbol)}${s.kernel ? ' <span class="tag">kernel</span>' : ''}</td><td class="num">${s.base_self.toFixed(2)}%</td><td class="num">${s.patched_self.toFixed(2)}%</td>` +
				`<td class="num delta-${dir}">${s.delta > 0 ? '+' : ''}${s.delta.toFixed(2)}</td><td class="bar-col"><span class="bar ${dir}" style="width:${w}%"></span></td></tr>`;
		}).join('') + '</tbody></table></div></section>';
}

// ---- stages and logs ----

function stageName(g) {
	return `${g.kind}${g.side ? ' ' + g.side : ''}${g.boot_index !== null && g.boot_index !== undefined && g.kind !== 'build' ? ' #' + (g.boot_index + 1) : ''}`;
}

function stageSummary(g) {
	const took = g.started ? ((g.finished || (g.state === 'running' ? Date.now() / 1000 : null)) ?? null) : null;
	return `<span class="st-seq">${g.seq}</span>` +
		`<span class="st-name">${esc(stageName(g))}${g.kind === 'boot' ? ' <span class="muted">(console)</span>' : ''}</span>` +
		`<span>${stateHtml(g.state)}</span>` +
		`<span class="st-where">${esc(g.machine || '')}${g.attempt ? ` <span class="muted">attempt ${g.attempt + 1}</span>` : ''}</span>` +
		`<span class="st-time">${timeHtml(g.started)}</span>` +
		`<span class="num">${took ? duration(took - g.started) : DASH}</span>` +
		`<span class="st-err">${g.repeat_of !== null && g.repeat_of !== undefined ? `<span class="tag">repeats stage ${g.repeat_of}</span> ` : ''}` +
		`${g.error_class ? `<span class="badge ${g.error_class === 'cancelled' ? 's-cancelled' : 's-failed'}">${esc(g.error_class)}</span> ${esc(g.error_message || '')}` : ''}` +
		`${g.note ? ` <span class="muted st-note">${esc(g.note)}</span>` : ''}</span>`;
}

function specLabel(e) {
	const p = e.params || {};
	const params = Object.keys(p).filter((k) => k !== 'neighbour').map((k) => `${k}=${Array.isArray(p[k]) ? p[k].join(',') : p[k]}`).join(' ');
	return `spec ${e.spec} ${e.workload || ''}${params ? ' ' + params : ''}`;
}

// Which specs of a run stage ran, which failed and why.
function specsHtml(g) {
	if (g.kind !== 'run' || !g.specs || !g.specs.length) return '';
	return '<ul class="specs small">' + g.specs.map((e) =>
		`<li data-spec="${e.spec}">${esc(specLabel(e))}: ${stateHtml(e.state === 'not_run' ? 'pending' : e.state)}` +
		`${e.class ? ` <span class="badge s-failed">${esc(e.class)}</span>` : ''}${e.message ? ` <span class="fail-msg">${esc(e.message)}</span>` : ''}</li>`).join('') + '</ul>';
}

// Per spec and side: boots whose run of it was done, and failed.
function specsTable(job) {
	const rows = new Map();
	for (const g of job.stages || []) {
		if (g.kind !== 'run') continue;
		for (const e of g.specs || []) {
			if (!rows.has(e.spec)) rows.set(e.spec, { e, base: [0, 0], patched: [0, 0], run: [0, 0], why: '' });
			const r = rows.get(e.spec), side = r[g.side || 'run'];
			if (!side) continue;
			if (e.state === 'done') side[0]++;
			else if (e.state === 'failed') {
				side[1]++;
				if (!r.why) r.why = e.message || '';
			}
		}
	}
	if (!rows.size) return '';
	const ab = job.kind === 'ab';
	const cell = (c) => `<td class="num">${c[0]}</td><td class="num${c[1] ? ' bad' : ''}">${c[1]}</td>`;
	return `<section id="specs" aria-labelledby="h-specs"><h2 id="h-specs">Specs <span class="muted small">runs done and failed per side; a failed run is kept and its boot repeated once</span></h2>` +
		`<div class="table-wrap"><table class="specs-table"><thead><tr><th>spec</th>${ab ? '<th>base done</th><th>base failed</th><th>patched done</th><th>patched failed</th>' : '<th>done</th><th>failed</th>'}<th>first failure</th></tr></thead><tbody>` +
		[...rows.values()].map((r) => `<tr data-spec="${r.e.spec}"><td>${esc(specLabel(r.e))}</td>${ab ? cell(r.base) + cell(r.patched) : cell(r.run)}<td class="fail-msg">${esc(r.why)}</td></tr>`).join('') +
		'</tbody></table></div></section>';
}

function stagesHtml(job) {
	if (!job.stages || !job.stages.length) return '<p class="muted">No stages.</p>';
	return '<div class="stages">' + job.stages.map((g) => `
<details class="stage st-${esc(g.state)}" data-stage="${g.id}">
<summary>${stageSummary(g)}</summary>${specsHtml(g)}
<div class="log-box"><p class="small"><a href="/api/v1/jobs/${job.id}/stages/${g.id}/log">raw log</a>${g.build_id ? ` \u00b7 build <code>${esc(g.build_id)}</code>` : ''}${g.boot_id ? ` \u00b7 boot id <code>${esc(g.boot_id)}</code>` : ''}</p><pre class="log">Loading\u2026</pre></div>
</details>`).join('') + '</div>';
}

function wireLogs(root, ctx, jobId) {
	root.addEventListener('toggle', async (ev) => {
		const d = ev.target;
		if (!d.matches || !d.matches('details.stage') || !d.open || d.dataset.loaded) return;
		d.dataset.loaded = '1';
		const pre = d.querySelector('pre.log');
		try {
			const text = await api(`/jobs/${jobId}/stages/${d.dataset.stage}/log`, { text: true, signal: ctx.signal });
			pre.textContent = text || '(empty log)';
		} catch (e) {
			d.dataset.loaded = '';
			pre.textContent = `could not load the log: ${e.message}`;
			ctx.error(e, 'stage log');
		}
	}, true);
}

// The part of a failed stage's log worth reading first: around the first
// line that looks like the error, else the tail. text is the log's last
// EXCERPT_TAIL lines (?tail=): a longer log is not downloaded to be read
// from its end, and the "whole log" link is there for the rest.
const EXCERPT_TAIL = 200;
function excerpt(text) {
	const lines = text.replace(/\n$/, '').split('\n');
	let at = -1;
	for (let i = 0; i < lines.length; i++) if (EXCERPT_RE.test(lines[i])) {
		at = i;
		break;
	}
	let from, to;
	if (at >= 0) {
		from = Math.max(0, at - 8);
		to = Math.min(lines.length, at + 16);
	} else {
		from = Math.max(0, lines.length - 24);
		to = lines.length;
	}
	// with fewer lines than asked for, this is the whole log and the line
	// numbers are its own; else they count from the start of the tail
	const of = lines.length < EXCERPT_TAIL ? `of ${lines.length}` : `of the last ${EXCERPT_TAIL}`;
	return {
		html: lines.slice(from, to).map((l, k) => (from + k === at ? `<mark>${esc(l)}</mark>` : esc(l))).join('\n'),
		where: `Lines ${from + 1}\u2013${to} ${of}:`,
	};
}

function failureHtml(job) {
	if (job.state === 'cancelled') {
		const why = job.error && job.error.message ? ` <span class="fail-msg">${esc(job.error.message)}</span>` : '';
		return `<section id="failure" class="notice" aria-labelledby="h-failure"><h2 id="h-failure">Cancelled</h2><p>The job was cancelled${job.stage ? ` during its ${esc(job.stage)} stage` : ''}.${why}</p></section>`;
	}
	const failed = (job.stages || []).filter((g) => g.state === 'failed');
	if (!failed.length && !job.error) return '';
	const parts = failed.map((g) => `
<div class="failure" data-failed-stage="${g.id}">
<p><strong>Stage ${g.seq}: ${esc(stageName(g))}</strong>${g.machine ? ` on ${esc(g.machine)}` : ''} failed \u2014 class <span class="badge s-failed fail-class">${esc(g.error_class || '?')}</span>
<span class="fail-msg">${esc(g.error_message || '')}</span></p>
<p class="muted small excerpt-where">Loading the ${g.kind === 'boot' ? 'console' : 'log'}\u2026</p>
<pre class="log excerpt"></pre>
<p class="small"><a href="/api/v1/jobs/${job.id}/stages/${g.id}/log">whole ${g.kind === 'boot' ? 'console log' : 'log'}</a></p>
</div>`);
	if (!parts.length && job.error)
		parts.push(`<p>class <span class="badge s-failed fail-class">${esc(job.error.class)}</span> <span class="fail-msg">${esc(job.error.message)}</span></p>`);
	const cls = job.error && job.error.class;
	const kind = ['patch', 'build', 'boot', 'workload'].includes(cls)
		? 'a result of the patch or the workload, not a regression' : cls === 'suite' ? 'the suite fails on the base kernel too: broken on this tree, not a result of the patch'
			: cls === 'infra' ? 'a failure of the lab itself' : '';
	const verdict = job.error ? `<p class="job-error">Job: class <span class="badge s-failed fail-class">${esc(cls)}</span> <span class="fail-msg">${esc(job.error.message || '')}</span></p>` : '';
	const title = job.state === 'failed' ? 'Failed' : 'Runs that failed';
	const kept = job.state !== 'failed' ? '<p class="muted small">Kept as results; each failed boot was repeated once and the job went on.</p>' : '';
	return `<section id="failure" class="notice bad" aria-labelledby="h-failure"><h2 id="h-failure">${title}${kind ? ` <span class="small muted">(${kind})</span>` : ''}</h2>${verdict}${kept}${parts.join('')}</section>`;
}

async function loadExcerpts(root, ctx, jobId) {
	for (const box of root.querySelectorAll('[data-failed-stage]')) {
		const where = box.querySelector('.excerpt-where'), pre = box.querySelector('pre.excerpt');
		try {
			const text = await api(`/jobs/${jobId}/stages/${box.dataset.failedStage}/log?tail=${EXCERPT_TAIL}`,
				{ text: true, signal: ctx.signal });
			if (!text.trim()) {
				where.textContent = 'The stage left an empty log.';
				pre.remove();
				continue;
			}
			const ex = excerpt(text);
			where.textContent = ex.where;
			pre.innerHTML = ex.html;
		} catch (e) {
			where.textContent = `Could not load the log: ${e.message}`;
			ctx.error(e, 'failed stage log');
		}
	}
}

// ---- provenance ----

function valueHtml(v) {
	if (v === null || v === undefined) return DASH;
	if (typeof v === 'object') {
		if (Array.isArray(v) && v.every((x) => typeof x !== 'object')) return esc(v.join(', ')) || DASH;
		return '<dl class="kv">' + Object.keys(v).map((k) => `<dt>${esc(k)}</dt><dd>${valueHtml(v[k])}</dd>`).join('') + '</dl>';
	}
	return `<code>${esc(v)}</code>`;
}

// One side's provenance: its job, its build (commit, config, compiler,
// kernel release), anything else as given.
function sideProvenance(p, side) {
	if (!p || typeof p !== 'object') return valueHtml(p);
	const out = [];
	if (p.job && typeof p.job === 'object')
		out.push(`<dt>job</dt><dd><a href="/jobs/${esc(p.job.id)}">#${esc(p.job.id)}</a>${p.job.tree ? ` <code>${esc(p.job.tree)}</code> <code>${esc(p.job.base)}</code>` : ''}</dd>`);
	const builds = Array.isArray(p.builds) ? p.builds.filter((b) => !b.side || b.side === side) : [];
	for (const b of builds) {
		out.push(`<dt>build</dt><dd><code>${esc(b.build_id)}</code></dd>`,
			`<dt>commit</dt><dd><code>${esc(b.commit || DASH)}</code></dd>`,
			`<dt>config</dt><dd><code>${esc(b.config_hash || DASH)}</code></dd>`,
			`<dt>compiler</dt><dd>${esc(b.compiler || DASH)}</dd>`);
		if (b.meta && typeof b.meta === 'object')
			for (const k of Object.keys(b.meta)) if (k !== 'side') out.push(`<dt>${esc(k)}</dt><dd>${valueHtml(b.meta[k])}</dd>`);
		if (b.duration_s !== null && b.duration_s !== undefined) out.push(`<dt>build took</dt><dd>${duration(b.duration_s)}</dd>`);
	}
	for (const k of Object.keys(p)) if (k !== 'job' && k !== 'builds') out.push(`<dt>${esc(k)}</dt><dd>${valueHtml(p[k])}</dd>`);
	return `<dl class="kv">${out.join('')}</dl>`;
}

function provenanceSection(job, cmp) {
	const p = cmp ? cmp.provenance : null;
	const side = (s) => p ? `<td>${sideProvenance(p[s], s)}</td>` : '';
	let body = '';
	if (p) {
		body = `<div class="table-wrap"><table class="data small prov"><thead><tr><th scope="col"></th><th scope="col">base</th><th scope="col">patched</th></tr></thead><tbody>
<tr><th scope="row">boots</th><td>${p.boots.base}</td><td>${p.boots.patched}</td></tr>
<tr><th scope="row">machines</th><td>${esc(p.machines.base.join(', ')) || DASH}</td><td>${esc(p.machines.patched.join(', ')) || DASH}</td></tr>
<tr><th scope="row">builds</th><td>${p.builds.base.map((b) => `<code>${esc(b)}</code>`).join(' ') || DASH}</td><td>${p.builds.patched.map((b) => `<code>${esc(b)}</code>`).join(' ') || DASH}</td></tr>
<tr><th scope="row">details</th>${side('base')}${side('patched')}</tr>
</tbody></table></div>`;
		const r = cmp.rules;
		const d = cmp.design || {};
		body += `<p class="small muted">Rules: ${esc(r.test || 'Mann-Whitney U')}, \u03b1 = ${r.alpha}${r.multiplicity ? ` (${esc(r.multiplicity)})` : ''}; ` +
			(d.looks === 2 ? `look ${d.look} of 2 (${d.boots} boots a side, up to ${d.max_boots}) spends \u03b1 = ${Number(d.alpha).toPrecision(2)}; ` : '') +
			`${esc(r.ci || 'bootstrap CI')} at ${Math.round(r.ci_level * 100)}% (${r.resamples} resamples); ` +
			leastChanges(r) +
			`; outliers flagged at |z| > ${r.outlier_z}.` +
			(cmp.per_cpu_excluded && cmp.per_cpu_excluded.length ? ` ${cmp.per_cpu_excluded.length} per-CPU metrics left out of the rows.` : '') + '</p>';
	}
	return `<section id="provenance" aria-labelledby="h-provenance"><h2 id="h-provenance">Provenance</h2>
<dl class="kv wide">
<dt>job</dt><dd>#${job.id} (${esc(job.kind)}), suite <code>${esc(job.suite)}</code>, submitted by ${esc(job.submitter || DASH)}</dd>
${job.kind === 'ab' ? `<dt>tree</dt><dd><code>${esc(job.tree)}</code> at <code>${esc(job.base)}</code></dd><dt>patch</dt><dd>${esc(patchName(job))}</dd><dt>source</dt><dd>${esc(patchSource(job))}</dd>` : ''}
${seriesHtml(job.patches)}${defaultsHtml(job.defaults)}
<dt>boots</dt><dd>${job.boots}${job.max_boots && job.max_boots > job.boots ? ` (up to ${job.max_boots} while inconclusive)` : ''}</dd>
<dt>machines</dt><dd>${esc((job.machines || []).join(', ') || 'any')}${job.tags && job.tags.length ? ` \u00b7 tags ${esc(job.tags.join(', '))}` : ''}${job.arch ? ` \u00b7 ${esc(job.arch)}` : ''}</dd>
<dt>created</dt><dd>${timeHtml(job.created)}</dd><dt>started</dt><dd>${timeHtml(job.started)}</dd><dt>finished</dt><dd>${timeHtml(job.finished)}</dd>
</dl>${body}</section>`;
}

// An mbox's series, in the order git am applied it (the cover letter named the job).
function seriesHtml(series) {
	const list = series && Array.isArray(series.patches) ? series.patches : [];
	if (!list.length) return '';
	const n = list.length;
	return `<dt>series</dt><dd id="series">${n} patch${n === 1 ? '' : 'es'}${typeof series.cover === 'string' ? ', after a cover letter' : ''}` +
		`<ol class="series">${list.map((s) => `<li>${esc(s)}</li>`).join('')}</ol></dd>`;
}

// What the job took from the lab's defaults: ("suite tlb, tree linux").
function defaultsHtml(taken) {
	const keys = taken && typeof taken === 'object' ? Object.keys(taken) : [];
	if (!keys.length) return '';
	return `<dt>defaults</dt><dd id="defaults">${keys.map((k) => `${esc(k)} <code>${esc(taken[k])}</code>`).join(', ')} (the lab's, not named by the submitter)</dd>`;
}

// ---- run jobs: results without a comparison ----

async function resultsSection(ctx, job) {
	const [m, r] = await Promise.all([api(`/jobs/${job.id}/metrics`, { signal: ctx.signal }), api(`/jobs/${job.id}/runs`, { signal: ctx.signal })]);
	const runs = new Map(r.runs.map((x) => [x.id, x]));
	const groups = new Map();
	for (const x of m.metrics) {
		const run = runs.get(x.run);
		if (!run) continue;
		const params = paramsText(run.params);
		const key = `${run.workload}\u0000${params}\u0000${x.name}`;
		if (!groups.has(key)) groups.set(key, { workload: run.workload, params, name: x.name, unit: x.unit, values: [] });
		groups.get(key).values.push(x.value);
	}
	if (!groups.size) return '<section id="results"><h2>Results</h2><p class="muted">No measured iterations yet.</p></section>';
	return `<section id="results" aria-labelledby="h-results"><h2 id="h-results">Results <span class="muted small">median of the measured iterations</span></h2>
<div class="table-wrap"><table class="data small"><thead><tr><th scope="col">Workload</th><th scope="col">Params</th><th scope="col">Metric</th><th scope="col">Median</th><th scope="col">Unit</th><th scope="col">n</th></tr></thead><tbody>` +
		[...groups.values()].map((g) => `<tr><td>${esc(g.workload)}</td><td class="params">${esc(g.params)}</td><td>${esc(g.name)}</td><td class="num">${num(median(g.values))}</td><td>${esc(g.unit || '')}</td><td class="num">${g.values.length}</td></tr>`).join('') +
		'</tbody></table></div></section>';
}

// ---- shootdowns over time ----

// Per side, the per-second rate of the first shootdown counter that has
// samples, as the median over the side's run stages at each second since
// the stage's first sample.
async function loadShootdowns(ctx, job) {
	const stages = new Map((job.stages || []).map((g) => [g.id, g]));
	for (const name of SHOOTDOWN_NAMES) {
		// the samples come in pages (at most 5000 each); a bounded number of them
		const samples = [];
		let after = 0;
		for (let page = 0; page < 40 && after !== null; page++) {
			const data = await api(`/jobs/${job.id}/samples?name=${encodeURIComponent(name)}&after=${after}`,
				{ signal: ctx.signal });
			samples.push(...data.samples);
			after = data.next ?? null;
		}
		const perStage = new Map();
		for (const s of samples) {
			const v = s.values ? s.values[name] : null;
			if (v === null || v === undefined || !(s.dt > 0)) continue;
			if (!perStage.has(s.stage)) perStage.set(s.stage, []);
			perStage.get(s.stage).push([s.t, v / s.dt]);
		}
		if (!perStage.size) continue;
		const sides = new Map();
		for (const [sid, pts] of perStage) {
			const side = stages.get(sid)?.side || 'run';
			pts.sort((a, b) => a[0] - b[0]);
			const t0 = pts[0][0];
			const series = [];
			for (const [t, v] of pts) {
				const k = Math.round(t - t0);
				if (series[k] === undefined) series[k] = v;
			}
			if (!sides.has(side)) sides.set(side, []);
			sides.get(side).push(series);
		}
		const out = {};
		for (const [side, list] of sides) {
			const len = Math.max(...list.map((s) => s.length));
			const med = [];
			for (let k = 0; k < len; k++) med.push(median(list.map((s) => (s[k] === undefined ? null : s[k]))));
			out[side] = { values: med, stages: list.length };
		}
		return { name, sides: out };
	}
	return null;
}

// ---- the page ----

function wireCancel(ctx, job) {
	const cancel = ctx.main.querySelector('#cancel-job');
	if (!cancel) return;
	cancel.addEventListener('click', async () => {
		if (!storedToken()) {
			ctx.error(new Error('cancelling needs a token: set it on the Submit page'));
			return;
		}
		cancel.disabled = true;
		try {
			await api(`/jobs/${job.id}/cancel`, { method: 'POST' });
			ctx.navigate(location.pathname + location.search, true);
		} catch (e) {
			cancel.disabled = false;
			ctx.error(e, 'cancel');
		}
	});
}

function header(job, cmp) {
	const cancellable = job.state === 'queued' || job.state === 'running';
	const links = [`<a href="/api/v1/jobs/${job.id}">job JSON</a>`];
	if (cmp) links.push(`<a href="/api/v1/jobs/${job.id}/comparison">comparison JSON</a>`);
	if (cmp && ['done', 'failed', 'cancelled'].includes(job.state)) links.push(`<a href="/api/v1/jobs/${job.id}/report.txt">report (text)</a>`);
	links.push(`<a href="/api/v1/jobs/${job.id}/runs">runs</a>`, `<a href="/api/v1/jobs/${job.id}/metrics">metrics</a>`);
	const what = job.kind === 'ab'
		? `<code>${esc(job.tree)}</code> <code>${esc(job.base)}</code> + <span class="patch" title="${esc(patchSource(job))}">${esc(patchName(job))}</span>`
		: 'the suite on machines as they are';
	return `<header class="job-head" id="job-head">
<h1 tabindex="-1">Job #${job.id} ${stateHtml(job.state)} ${job.verdict !== undefined && job.verdict !== null ? verdictHtml(job.verdict) : ''}</h1>
<p class="meta">${job.kind === 'ab' ? 'A/B' : 'run'} \u00b7 suite <code>${esc(job.suite)}</code> \u00b7 ${what} \u00b7 by ${esc(job.submitter || DASH)} \u00b7 ${job.boots} boot${job.boots === 1 ? '' : 's'}${job.kind === 'ab' ? ' per side' : ''}
\u00b7 created ${timeHtml(job.created)}${job.finished && job.started ? ` \u00b7 took ${duration(job.finished - job.started)}` : ''}${job.state === 'running' && job.stage ? ` \u00b7 now: <strong>${esc(job.stage)}</strong>` : ''}</p>
<p class="links small">${links.join(' \u00b7 ')}${cancellable ? ' <button type="button" id="cancel-job" class="danger">Cancel job</button>' : ''}</p>
</header>`;
}

// ---- a per-patch series: which patch moved what ----

// One step's cell: its change and verdict ("+28.5% regression"), or a dash.
function stepCell(c) {
	if (!c) return `<td class="muted">${DASH}</td>`;
	return `<td>${c.change_pct === null || c.change_pct === undefined ? DASH : esc(pct(c.change_pct))} ${verdictHtml(c.verdict)}</td>`;
}

function perPatchHtml(job, pp) {
	const n = pp.jobs.length;
	const jobs = pp.jobs.map((j) => `<li>${j.id === job.id ? '<strong>' : ''}<a href="/jobs/${esc(j.id)}">#${esc(j.id)}</a> ${esc(j.patch_subject || DASH)} · ${stateHtml(j.state)}${j.verdict ? ' ' + verdictHtml(j.verdict) : ''}${j.id === job.id ? '</strong>' : ''}</li>`).join('');
	const head = Array.from({ length: n }, (_, k) => `<th scope="col">patch ${k + 1}</th>`).join('');
	const rows = pp.rows.map((r) => `<tr><th scope="row"><code>${esc(r.workload)}</code> ${esc(shortParams(r.params_text))} <code>${esc(r.metric)}</code></th>` +
		r.steps.map(stepCell).join('') + `<td>${r.moved_by.length ? r.moved_by.map((k) => `patch ${k}`).join(', ') : 'none'}</td></tr>`).join('');
	return `<section id="per-patch" aria-labelledby="h-per-patch"><h2 id="h-per-patch">Per patch <span class="muted small">${esc(pp.series || '')}: job k applies patches 1..k on the base</span></h2>
<ol class="series">${jobs}</ol>
${pp.rows.length ? `<p class="small">Each patch's step: its prefix against the one before (patch 1: against the base), per headline row.</p>
<div class="table-wrap"><table class="data small"><thead><tr><th scope="col">row</th>${head}<th scope="col">moved by</th></tr></thead><tbody>${rows}</tbody></table></div>` :
		'<p class="muted">No rows yet: no job of the series is done.</p>'}
${(pp.notes || []).map((t) => `<p class="small muted">${esc(t)}</p>`).join('')}</section>`;
}

function toc(job, cmp, ran) {
	const items = [];
	if (job.per_patch) items.push(['per-patch', 'Per patch']);
	if (job.state === 'failed') items.push(['failure', 'Failure']);
	else if ((job.stages || []).some((g) => g.state === 'failed')) items.push(['failure', 'Failed runs']);
	if (job.state === 'cancelled') items.push(['failure', 'Cancelled']);
	if (cmp) {
		items.push(['summary', 'Verdict'], ['comparison', 'Comparison']);
		if (cmp.sweeps.length) items.push(['sweeps', 'Sweeps']);
		items.push(['tlb', 'Shootdowns'], ['profile', 'Profile']);
	} else if (job.kind === 'run' && ran) items.push(['results', 'Results'], ['tlb', 'Shootdowns']);
	if ((job.stages || []).some((g) => (g.specs || []).length)) items.push(['specs', 'Specs']);
	items.push(['stages', 'Stages and logs'], ['provenance', 'Provenance']);
	return `<nav class="toc small" aria-label="On this page">${items.map(([id, l]) => `<a href="#${id}">${l}</a>`).join(' \u00b7 ')}</nav>`;
}

export async function render(ctx) {
	const id = ctx.params[0];
	ctx.title(`job ${id}`);
	ctx.main.innerHTML = `<h1 tabindex="-1">Job #${esc(id)}</h1><p class="muted">Loading\u2026</p>`;
	const job = (await (ctx.prefetched || api(`/jobs/${id}`, { signal: ctx.signal }))).job;
	let cmp = null, cmpError = null;
	// a run that failed on one spec still measured the others
	const ran = (job.stages || []).some((g) => g.kind === 'run' && (g.state === 'done' || (g.specs || []).some((e) => e.state === 'done')));
	if (job.kind === 'ab' && ran) {
		try {
			cmp = (await api(`/jobs/${id}/comparison`, { signal: ctx.signal })).comparison;
		} catch (e) {
			if (e.name === 'AbortError') throw e;
			cmpError = e;
		}
	}
	performance.mark('tlblab:job-data');
	ctx.title(`job ${id}${job.verdict ? ' \u00b7 ' + job.verdict : ''}`);

	let html = header(job, cmp) + toc(job, cmp, ran) + failureHtml(job) + (job.per_patch ? '<div id="per-patch"></div>' : '');
	if (cmp) html += summarySection(job, cmp) + comparisonSection(cmp);
	else if (cmpError) html += `<section id="summary" class="notice bad"><h2>No comparison</h2><p>The API refused the comparison: <strong>HTTP ${cmpError.status} ${esc(cmpError.code)}</strong>: <span class="msg">${esc(cmpError.message)}</span></p></section>`;
	else if (job.kind === 'ab') html += `<section id="summary" class="notice"><h2>No comparison yet</h2><p>The comparison appears once both sides have run (${esc(job.state)}${job.stage ? ', stage ' + esc(job.stage) : ''}).</p></section>`;
	html += specsTable(job);
	html += '<div id="after-table"></div><div id="below"></div>';
	ctx.main.innerHTML = html;
	if (cmp) wireComparison(ctx.main, cmp);
	performance.mark('tlblab:table-rendered');
	if (cmpError) ctx.error(cmpError, 'comparison');
	// what sits below the table and the charts goes in after the mark
	ctx.main.querySelector('#below').outerHTML =
		`<section id="stages" aria-labelledby="h-stages"><h2 id="h-stages">Stages and logs <span class="muted small">build, boot (the console), run; open one for its log</span></h2><div id="stages-list">${stagesHtml(job)}</div></section>` +
		provenanceSection(job, cmp);

	wireLogs(ctx.main, ctx, job.id);
	wireCancel(ctx, job);

	// below the table: charts, samples, profile, excerpts of failed stages
	const after = ctx.main.querySelector('#after-table');
	if (cmp) after.innerHTML = sweepsSection(cmp) + tlbSection(cmp) + profileSection(cmp);
	else if (job.kind === 'run' && ran) {
		after.innerHTML = await resultsSection(ctx, job) +
			`<section id="tlb" aria-labelledby="h-tlb"><h2 id="h-tlb">TLB shootdowns</h2>${tlbFigure()}</section>`;
	}
	const work = [loadExcerpts(ctx.main, ctx, job.id)];
	if (job.per_patch) {
		work.push((async () => {
			const pp = (await api(`/jobs/${id}/per-patch`, { signal: ctx.signal })).per_patch;
			ctx.main.querySelector('#per-patch').outerHTML = perPatchHtml(job, pp);
		})().catch((e) => ctx.error(e, 'per-patch series')));
	}
	if (ctx.main.querySelector('#tlb-chart')) {
		work.push((async () => {
			const cap = ctx.main.querySelector('#tlb-caption');
			const sd = await loadShootdowns(ctx, job);
			if (!sd) {
				cap.textContent = `No per-second shootdown samples (${SHOOTDOWN_NAMES.join(', ')}): the kernel lacks the counters, or the monitors were off.`;
				ctx.main.querySelector('#tlb-chart').remove();
				return;
			}
			const chart = await shootdownChart(ctx.main.querySelector('#tlb-chart'), sd, cap);
			ctx.cleanup(() => chart.destroy());
		})().catch((e) => ctx.error(e, 'shootdowns over time')));
	}
	if (cmp) {
		work.push((async () => {
			for (const el of ctx.main.querySelectorAll('[data-sweep]')) {
				const chart = await sweepChart(el, cmp.sweeps[+el.dataset.sweep], cmp.rows);
				ctx.cleanup(() => chart.destroy());
			}
		})().catch((e) => ctx.error(e, 'sweep charts')));
	}
	performance.mark('tlblab:charts-started');
	await Promise.all(work);
	performance.mark('tlblab:page-complete');

	if (job.state === 'queued' || job.state === 'running') {
		let last = JSON.stringify(job);
		ctx.every(REFRESH_MS, async () => {
			const j = (await api(`/jobs/${id}`, { signal: ctx.signal })).job;
			const now = JSON.stringify(j);
			if (now === last) return true;
			last = now;
			if (j.state !== 'queued' && j.state !== 'running') {
				ctx.navigate(location.pathname + location.search, true);
				return false;
			}
			const head = ctx.main.querySelector('#job-head');
			head.outerHTML = header(j, cmp);
			wireCancel(ctx, j);
			const list = ctx.main.querySelector('#stages-list');
			const open = new Set([...list.querySelectorAll('details[open]')].map((d) => d.dataset.stage));
			list.innerHTML = stagesHtml(j);
			for (const d of list.querySelectorAll('details')) if (open.has(d.dataset.stage)) d.open = true;
			return true;
		});
	}
}
