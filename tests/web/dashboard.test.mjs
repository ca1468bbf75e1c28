// The dashboard in real headless Chromium against a real tlblabd whose store
// tests/integration/t0070-dashboard.sh filled (tests/web/seed.py) and which
// serves web/. What the pages show is checked against what the API says.
// Prints TAP lines ("ok N - ...", "not ok N - ..."); exits 1 on a failure.
//   TLBLAB_URL   http://127.0.0.1:PORT
//   TLBLAB_TOKEN a token the daemon accepts
//   ARTIFACTS    where the screenshots go
import { mkdirSync } from 'node:fs';
import { launch } from './browser.mjs';

const URL_ = process.env.TLBLAB_URL;
const TOKEN = process.env.TLBLAB_TOKEN;
const ART = process.env.ARTIFACTS || 'build/artifacts/web';
if (!URL_ || !TOKEN) {
	console.log('not ok 1 - TLBLAB_URL and TLBLAB_TOKEN must be set');
	process.exit(1);
}
mkdirSync(ART, { recursive: true });

let n = 0, failures = 0;
function report(pass, what, detail) {
	n++;
	console.log(`${pass ? 'ok' : 'not ok'} ${n} - ${what}`);
	if (!pass) {
		failures++;
		for (const l of String(detail || '').split('\n').slice(0, 25)) console.log('#   ' + l);
	}
}
// step(what, fn): fn throws (an Error with the why) to fail.
async function step(what, fn) {
	try {
		await fn();
		report(true, what);
	} catch (e) {
		report(false, what, e && e.stack ? e.stack : e);
	}
}
function expect(cond, why) {
	if (!cond) throw new Error(why);
}
function eq(a, b, what) {
	const sa = JSON.stringify(a), sb = JSON.stringify(b);
	if (sa !== sb) throw new Error(`${what}: page has ${sa}, API has ${sb}`);
}

async function apiGet(path) {
	const r = await fetch(URL_ + '/api/v1' + path);
	if (!r.ok) throw new Error(`GET ${path}: HTTP ${r.status} ${await r.text()}`);
	return r.json();
}
async function apiPost(path, body) {
	const r = await fetch(URL_ + '/api/v1' + path, {
		method: 'POST', body: JSON.stringify(body),
		headers: { 'Content-Type': 'application/json', Authorization: 'Bearer ' + TOKEN },
	});
	if (!r.ok) throw new Error(`POST ${path}: HTTP ${r.status} ${await r.text()}`);
	return r.json();
}

// The same medians the page computes, from the API's samples, to check the
// chart's average and peak.
function median(xs) {
	const v = xs.filter((x) => x !== null && Number.isFinite(x)).sort((a, b) => a - b);
	if (!v.length) return null;
	const m = v.length >> 1;
	return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// WCAG contrast of two CSS rgb() colours.
function contrast(c1, c2) {
	const lum = (c) => {
		const [r, g, b] = c.match(/[\d.]+/g).slice(0, 3).map((x) => {
			const v = Number(x) / 255;
			return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
		});
		return 0.2126 * r + 0.7152 * g + 0.0722 * b;
	};
	const [a, b] = [lum(c1), lum(c2)].sort((x, y) => y - x);
	return (a + 0.05) / (b + 0.05);
}

const browser = await launch();
const consoleErrors = [];
const offsite = [];
// responses the test provokes on purpose (Chromium logs each as a console error)
const expectedHttpErrors = new Set();

async function newContext(colorScheme, viewport = { width: 1400, height: 900 }) {
	const ctx = await browser.newContext({ viewport, colorScheme });
	ctx.on('request', (req) => {
		const u = req.url();
		if (!u.startsWith(URL_ + '/') && !u.startsWith('data:')) offsite.push(u);
	});
	ctx.on('page', (page) => watch(page));
	return ctx;
}
function watch(page) {
	page.on('console', (m) => {
		if (m.type() !== 'error') return;
		const where = m.location() && m.location().url ? m.location().url : '';
		if (/Failed to load resource/.test(m.text()) && [...expectedHttpErrors].some((p) => where.includes(p))) return;
		consoleErrors.push(`${page.url()}: ${m.text()} ${where}`);
	});
	page.on('pageerror', (e) => consoleErrors.push(`${page.url()}: uncaught ${e.message}`));
}
const complete = (page) => page.waitForFunction(() => performance.getEntriesByName('tlblab:page-complete').length > 0, null, { timeout: 15000 });
const shot = async (page, name) => {
	await page.screenshot({ path: `${ART}/${name}.png`, fullPage: true });
};

const ctx = await newContext('light');
const page = await ctx.newPage();

// In the page: how many opaque pixels of a chart's canvas have the base and
// the patched colours (lines and points, not the axes or the bands).
const inkOf = (sel) => page.$$eval(sel, (els) => {
	const cs = getComputedStyle(document.documentElement);
	const rgb = (css) => {
		const c = document.createElement('canvas').getContext('2d');
		c.fillStyle = css;
		c.fillRect(0, 0, 1, 1);
		return [...c.getImageData(0, 0, 1, 1).data].slice(0, 3);
	};
	const want = { base: rgb(cs.getPropertyValue('--c-base').trim()), patched: rgb(cs.getPropertyValue('--c-patched').trim()) };
	return els.map((el) => {
		const c = el.querySelector('canvas');
		if (!c) return null;
		const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
		const out = { base: 0, patched: 0, series: el.dataset.series };
		for (let i = 0; i < d.length; i += 4) {
			if (d[i + 3] < 200) continue;
			for (const k of ['base', 'patched']) {
				const w = want[k];
				if (Math.abs(d[i] - w[0]) + Math.abs(d[i + 1] - w[1]) + Math.abs(d[i + 2] - w[2]) < 40) out[k]++;
			}
		}
		return out;
	});
});

// ---- the jobs list ----
const jobs = await apiGet('/jobs?limit=100');
await step(`the jobs list shows the ${jobs.total} jobs of the store with their state and stage`, async () => {
	await page.goto(URL_ + '/jobs');
	await page.waitForSelector('#jobs-table tbody tr[data-job]');
	const rows = await page.$$eval('#jobs-table tbody tr[data-job]', (trs) => trs.map((tr) => ({
		id: Number(tr.dataset.job), state: tr.querySelector('.c-state').textContent.trim(),
		stage: tr.querySelector('.c-stage').textContent.trim(), href: tr.querySelector('a').getAttribute('href'),
	})));
	eq(rows.map((r) => r.id), jobs.jobs.map((j) => j.id), 'job ids, newest first');
	for (const [i, j] of jobs.jobs.entries()) {
		eq(rows[i].state, j.state, `job ${j.id} state`);
		expect(rows[i].stage.includes(j.stage), `job ${j.id}: stage cell "${rows[i].stage}" does not name stage ${j.stage}`);
		eq(rows[i].href, `/jobs/${j.id}`, `job ${j.id} link`);
	}
	expect(jobs.jobs.some((j) => j.state === 'running') && jobs.jobs.some((j) => j.state === 'queued'),
		'the store should hold a running and a queued job');
});
await shot(page, 'jobs-light');

await step('a finished A/B job shows the verdict the API gives it (regression)', async () => {
	const j1 = jobs.jobs.find((j) => j.id === 1);
	eq(j1.verdict, 'regression', 'API verdict of job 1');
	const v = await page.textContent('#jobs-table tr[data-job="1"] .c-verdict');
	expect(v.includes('regression'), `verdict cell says "${v.trim()}"`);
});

await step('the verdict filter lists what GET /jobs?verdict=regression lists, with a stable URL', async () => {
	const want = (await apiGet('/jobs?verdict=regression')).jobs.map((j) => j.id);
	await page.selectOption('select[name=verdict]', 'regression');
	await page.waitForURL(/\/jobs\?verdict=regression$/);
	// the URL changes before the filtered list is drawn: until then the
	// unfiltered one is on the page, not "Loading"
	await page.waitForFunction((n) => document.querySelector('#jobs-count').textContent.endsWith(`of ${n} jobs`), want.length, { timeout: 10000 })
		.catch(() => {});
	const got = await page.$$eval('#jobs-table tbody tr[data-job]', (trs) => trs.map((tr) => Number(tr.dataset.job)));
	eq(got, want, 'jobs with verdict regression');
	expect(want.length >= 1, 'no job has a regression verdict');
});

await step('the state and submitter filters work from a pasted URL', async () => {
	await page.goto(URL_ + '/jobs?state=failed');
	await page.waitForSelector('#jobs-table tbody tr[data-job]');
	eq(await page.$$eval('#jobs-table tbody tr[data-job]', (t) => t.map((tr) => Number(tr.dataset.job))),
		(await apiGet('/jobs?state=failed')).jobs.map((j) => j.id), 'failed jobs');
	await page.goto(URL_ + '/jobs?submitter=carol');
	await page.waitForSelector('#jobs-table tbody tr[data-job]');
	eq(await page.$$eval('#jobs-table tbody tr[data-job]', (t) => t.map((tr) => Number(tr.dataset.job))), [3], "carol's jobs");
	eq(await page.inputValue('input[name=submitter]'), 'carol', 'the filter field shows the filter');
});

await step('keyboard: "/" focuses the filter, j/k walk the job links, Enter opens one', async () => {
	await page.goto(URL_ + '/jobs');
	await page.waitForSelector('#jobs-table tbody tr[data-job]');
	await page.keyboard.press('/');
	expect(await page.evaluate(() => document.activeElement.hasAttribute('data-filter')), '"/" did not focus the filter');
	await page.keyboard.press('Escape');
	await page.keyboard.press('j');
	await page.keyboard.press('j');
	await page.keyboard.press('k');
	await page.keyboard.press('j');
	const second = jobs.jobs[1].id;
	eq(await page.evaluate(() => document.activeElement.getAttribute('href')), `/jobs/${second}`, 'focused link after j j k j');
	await page.keyboard.press('Enter');
	await page.waitForURL(new RegExp(`/jobs/${second}$`));
	await page.waitForSelector('#job-head');
	const h1 = await page.textContent('h1');
	expect(h1.includes(`Job #${second}`), `heading is "${h1}"`);
});

await step('the list refreshes itself while jobs run: a job cancelled through the API shows as cancelled', async () => {
	await page.goto(URL_ + '/jobs');
	await page.waitForSelector('#jobs-table tbody tr[data-job]');
	const queued = jobs.jobs.find((j) => j.state === 'queued');
	expect(queued, 'no queued job');
	await apiPost(`/jobs/${queued.id}/cancel`, {});
	await page.waitForFunction((id) => document.querySelector(`#jobs-table tr[data-job="${id}"] .c-state`)?.textContent.trim() === 'cancelled',
		queued.id, { timeout: 12000 });
});

// ---- a finished A/B job ----
const cmp = (await apiGet('/jobs/1/comparison')).comparison;
const unchanged = (v) => v === 'same' || v === 'unavailable' || v === 'context';
// The order of the rows: the headline rows, then the rows that changed
// (regressions, improvements, neutral changes, inconclusive), then the rest
// (same, unavailable, context); the API's order within each.
const CHANGED_RANK = { regression: 0, improvement: 1, changed: 2, inconclusive: 3 };
const group = (r) => (r.headline ? 0 : unchanged(r.verdict) ? 2 : 1);
const defaultOrder = cmp.rows.map((_, i) => i).sort((a, b) => {
	const x = cmp.rows[a], y = cmp.rows[b];
	return group(x) - group(y) || (group(x) === 1 ? CHANGED_RANK[x.verdict] - CHANGED_RANK[y.verdict] : 0) || a - b;
});
const folded = cmp.rows.filter((r) => group(r) === 2).length;
const rank = new Map(defaultOrder.map((i, k) => [i, k]));
const paramsOf = (r) => r.params_text.split(' ').filter((kv) => kv && !kv.startsWith('workload='));
let firstRender = null;
await step(`job 1 (a stable URL) shows the ${cmp.rows.length} comparison rows of the API, headline and changed first, ${folded} unchanged ones folded`, async () => {
	await page.goto(URL_ + '/jobs/1');
	await page.waitForSelector('#cmp-table tbody tr', { state: 'attached' });
	firstRender = await page.evaluate(() => performance.getEntriesByName('tlblab:table-rendered')[0]?.startTime ?? null);
	// the params every row has are named once, above the table
	const common = (await page.$('#cmp-common')) ? (await page.textContent('#cmp-common .params')).split(' ') : [];
	const rows = await page.$$eval('#cmp-table tbody tr', (trs) => trs.map((tr) => ({
		i: Number(tr.dataset.i),
		metric: tr.querySelector('td.metric').textContent.trim(),
		params: tr.querySelector('td.params').textContent.trim(),
		change: tr.querySelector('td.change').textContent.trim(),
		verdict: tr.querySelector('td.c-verdict .badge').textContent.trim().split(' ').pop(),
		cls: tr.querySelector('td.c-class').textContent.trim(),
		visible: tr.offsetParent !== null,
	})));
	eq(rows.length, cmp.rows.length, 'row count');
	eq(rows.map((row) => row.i), defaultOrder, 'the order of the rows (API indexes)');
	for (const row of rows) {
		const i = row.i, r = cmp.rows[i];
		eq(row.metric, r.metric, `row ${i} metric`);
		eq(row.verdict, r.verdict, `row ${i} (${r.metric} ${r.params_text}) verdict`);
		eq([...common, ...row.params.split(' ').filter(Boolean)].sort(), paramsOf(r).sort(), `row ${i} params, with those of every row`);
		// a row from a base near 0 has its change in its unit (change_abs), no %
		if (r.change_pct === null && typeof r.change_abs === 'number') expect(row.change.endsWith(r.unit || ''), `row ${i} change in the row's unit: ${row.change}`);
		else if (r.change_pct === null) expect(!/\d/.test(row.change), `row ${i} change should be a dash: ${row.change}`);
		else expect(Math.abs(parseFloat(row.change.replace(/[^\d.eE+-]/g, '')) - r.change_pct) <= Math.max(0.051, Math.abs(r.change_pct) * 0.001),
			`row ${i} change ${row.change} vs ${r.change_pct}`);
		eq(row.cls, r.class, `row ${i} (${r.metric}) class`);
		eq(row.visible, group(r) < 2, `row ${i} (${r.verdict}${r.headline ? ', headline' : ''}) visible`);
	}
	const legend = await page.textContent('#class-legend');
	expect(legend.includes('not hardware cycles'), `the class legend does not say what work is: ${legend}`);
	// the page keeps no legend of its own: it is the API's list of classes
	eq(legend, 'Classes: ' + cmp.rules.classes.map((c) => `${c.name}: ${c.legend}`).join('; '), 'the class legend, from rules.classes');
	const title = await page.getAttribute('#cmp-table .cls-work', 'title');
	eq(title.split(';')[0], `work: ${cmp.rules.classes.find((c) => c.name === 'work').legend}`.split(';')[0], 'a work row\'s class title');
	expect(folded > 0 && folded < cmp.rows.length, `the fixture needs folded and shown rows (folded ${folded})`);
});

await step('the verdict summary matches the API summary', async () => {
	const s = cmp.summary;
	const counts = await page.$$eval('dd[data-count]', (dds) => Object.fromEntries(dds.map((d) => [d.dataset.count, Number(d.textContent)])));
	eq(counts, { regressions: s.regressions.length, improvements: s.improvements.length, changed: s.changed.length,
		inconclusive: s.inconclusive, same: s.same, unavailable: s.unavailable }, 'summary counts');
	const text = await page.textContent('#summary .summary-text');
	eq(text, s.text, 'summary text');
	expect((await page.textContent('#h-summary')).includes('regression'), 'the verdict heading does not say regression');
});

await step('the unchanged rows unfold with their button and fold again with "u"', async () => {
	const visible = () => page.$$eval('#cmp-table tbody tr', (t) => t.filter((tr) => tr.offsetParent !== null).length);
	const before = await visible();
	await page.click('#fold-toggle');
	eq(await page.getAttribute('#fold-toggle', 'aria-expanded'), 'true', 'aria-expanded');
	eq(await visible(), cmp.rows.length, 'rows shown when unfolded');
	await page.locator('body').focus();
	await page.keyboard.press('u');
	eq(await visible(), before, 'rows shown when folded again');
});

await step('sorting by Change from the keyboard orders the rows (descending, then ascending)', async () => {
	await page.click('#fold-toggle');
	await page.focus('button[data-sort=change]');
	await page.keyboard.press('Enter');
	eq(await page.getAttribute('th[data-key=change]', 'aria-sort'), 'descending', 'aria-sort');
	const values = () => page.$$eval('#cmp-table tbody tr', (t) => t.map((tr) => Number(tr.dataset.i)));
	// rows without a change last either way; ties in the first order
	const want = (dir) => cmp.rows.map((r, i) => i).sort((a, b) => {
		const x = cmp.rows[a].change_pct, y = cmp.rows[b].change_pct;
		if (x === null || y === null) return (x === null) - (y === null) || rank.get(a) - rank.get(b);
		return (x - y) * dir || rank.get(a) - rank.get(b);
	});
	eq(await values(), want(-1), 'row order by change, descending');
	await page.keyboard.press('Enter');
	eq(await page.getAttribute('th[data-key=change]', 'aria-sort'), 'ascending', 'aria-sort');
	eq(await values(), want(1), 'row order by change, ascending');
	await page.click('#fold-toggle');
});

await step(`a chart per thread sweep (${cmp.sweeps.length}) draws base and patched`, async () => {
	await complete(page);
	expect(cmp.sweeps.length > 0, 'the fixture has no sweep');
	const charts = await inkOf('.chart[data-sweep]');
	eq(charts.length, cmp.sweeps.length, 'charts');
	for (const c of charts) {
		expect(c, 'a sweep chart has no canvas');
		expect(c.base > 100 && c.patched > 100, `a sweep chart lacks a line: ${c.base} base and ${c.patched} patched pixels`);
		eq(c.series, '2', 'series drawn');
	}
});

await step('TLB shootdowns per second: base and patched overlaid, average and peak as the samples give them', async () => {
	const job = (await apiGet('/jobs/1')).job;
	const side = new Map(job.stages.map((g) => [g.id, g.side]));
	const samples = (await apiGet('/jobs/1/samples?name=interrupts.TLB')).samples;
	const per = new Map();
	for (const s of samples) {
		const v = s.values['interrupts.TLB'];
		if (v === null || v === undefined) continue;
		if (!per.has(s.stage)) per.set(s.stage, []);
		per.get(s.stage).push([s.t, v / s.dt]);
	}
	const want = {};
	for (const sd of ['base', 'patched']) {
		const series = [...per.entries()].filter(([id]) => side.get(id) === sd).map(([, pts]) => {
			pts.sort((a, b) => a[0] - b[0]);
			const out = [];
			for (const [t, v] of pts) {
				const k = Math.round(t - pts[0][0]);
				if (out[k] === undefined) out[k] = v;
			}
			return out;
		});
		const len = Math.max(...series.map((s) => s.length));
		const med = [];
		for (let k = 0; k < len; k++) med.push(median(series.map((s) => (s[k] === undefined ? null : s[k]))));
		const vals = med.filter((v) => v !== null);
		want[sd] = { avg: vals.reduce((a, b) => a + b, 0) / vals.length, peak: Math.max(...vals) };
	}
	const [ink] = await inkOf('#tlb-chart');
	const info = { series: ink && ink.series, caption: await page.textContent('#tlb-caption') };
	eq(info.series, '2', 'sides drawn');
	expect(ink.base > 100 && ink.patched > 100, `a side is not drawn: ${ink.base} base and ${ink.patched} patched pixels`);
	for (const sd of ['base', 'patched']) {
		const m = info.caption.match(new RegExp(`${sd}: average ([\\d,.]+)/s, peak ([\\d,.]+)/s`));
		expect(m, `caption does not give ${sd}'s average and peak: ${info.caption}`);
		const avg = Number(m[1].replace(/,/g, '')), peak = Number(m[2].replace(/,/g, ''));
		expect(Math.abs(avg - want[sd].avg) <= want[sd].avg * 0.001 + 0.5, `${sd} average ${avg}, samples give ${want[sd].avg}`);
		expect(Math.abs(peak - want[sd].peak) <= want[sd].peak * 0.001 + 0.5, `${sd} peak ${peak}, samples give ${want[sd].peak}`);
	}
	expect(want.patched.avg > want.base.avg * 2, 'the fixture should have patched shootdowns well above base');
});

await step('the TLB table and the profile diff show what the API gives', async () => {
	const tlbRows = cmp.tlb.reduce((a, t) => a + (t.shootdowns_per_kop ? 1 : 0) + t.counters.length, 0);
	eq(await page.$$eval('#tlb-table tbody tr', (t) => t.length), tlbRows, 'TLB rows');
	const syms = await page.$$eval('#profile-table tbody tr td.sym', (t) => t.map((td) => td.firstChild.textContent.trim()));
	eq(syms, cmp.profile_diff.symbols.map((s) => s.symbol), 'profile symbols, largest change first');
});

await step('stage logs open on demand: the boot stage shows its console', async () => {
	const job = (await apiGet('/jobs/1')).job;
	const boot = job.stages.find((g) => g.kind === 'boot');
	const log = await (await fetch(`${URL_}/api/v1/jobs/1/stages/${boot.id}/log`)).text();
	await page.click(`details[data-stage="${boot.id}"] > summary`);
	await page.waitForFunction((id) => !document.querySelector(`details[data-stage="${id}"] pre.log`).textContent.startsWith('Loading'), boot.id);
	eq(await page.textContent(`details[data-stage="${boot.id}"] pre.log`), log, 'log text');
	expect(log.includes('Run /init'), 'the fixture boot log');
});

await step('provenance and the JSON links are on the job page', async () => {
	const prov = await page.textContent('#provenance');
	for (const b of [...cmp.provenance.builds.base, ...cmp.provenance.builds.patched])
		expect(prov.includes(b), `build ${b} missing from provenance`);
	expect(await page.$('a[href="/api/v1/jobs/1/comparison"]'), 'no link to the comparison JSON');
	expect(await page.$('a[href="/api/v1/jobs/1"]'), 'no link to the job JSON');
	const r = await fetch(URL_ + '/api/v1/jobs/1/comparison');
	expect(r.ok && (await r.json()).comparison, 'the comparison link does not give the JSON');
});
await step('the job page lists the series in order, after the cover letter, and the defaults it took', async () => {
	const job = (await apiGet('/jobs/1')).job;
	eq((await page.$$eval('#series ol.series li', (li) => li.map((x) => x.textContent))).join(' | '),
		job.patches.patches.join(' | '), 'the series');
	expect((await page.textContent('#series')).startsWith('2 patches, after a cover letter'), 'the series head');
	eq(await page.textContent('#defaults'), "tree linux, base v6.1-debian (the lab's, not named by the submitter)", 'defaults');
});
await shot(page, 'job-light');
// the job page's first screen, as a reader opens it: the README's picture
// (docs/img/job-page.png is a copy of it)
await page.evaluate(() => window.scrollTo(0, 0));
await page.screenshot({ path: `${ART}/job-top.png` });
console.log(`# job 1: table in the DOM ${firstRender === null ? '?' : firstRender.toFixed(1)} ms after navigation start (${cmp.rows.length} rows; make bench measures 500)`);

// ---- failed jobs ----
await step('a failed build shows the stage, the class, the message and the compile error from its log', async () => {
	const job = (await apiGet('/jobs/2')).job;
	const st = job.stages.find((g) => g.state === 'failed');
	await page.goto(URL_ + '/jobs/2');
	await page.waitForSelector('#failure');
	await complete(page);
	const box = `#failure [data-failed-stage="${st.id}"]`;
	const head = await page.textContent(box + ' p');
	expect(head.includes('build patched'), `failure heading: ${head}`);
	eq((await page.textContent(box + ' .fail-class')).trim(), st.error_class, 'class');
	eq((await page.textContent(box + ' .fail-msg')).trim(), st.error_message, 'message');
	const mark = await page.textContent(box + ' pre.excerpt mark');
	expect(mark.includes("error: 'info_batch' undeclared"), `highlighted line: ${mark}`);
	const ex = await page.textContent(box + ' pre.excerpt');
	expect(ex.includes('make: *** [Makefile:1992: arch/x86] Error 2'), 'the excerpt misses the make error');
});
await shot(page, 'failed-build');

await step('a failed boot shows the console: the panic is in the excerpt, read from the log\'s tail; the whole log is a link', async () => {
	const job = (await apiGet('/jobs/3')).job;
	const st = job.stages.find((g) => g.state === 'failed');
	const logPath = `/api/v1/jobs/3/stages/${st.id}/log`;
	const logRequests = [];
	const seen = (req) => {
		if (req.url().startsWith(URL_ + logPath)) logRequests.push(req.url().slice(URL_.length));
	};
	page.on('request', seen);
	await page.goto(URL_ + '/jobs/3');
	await page.waitForSelector('#failure');
	await complete(page);
	page.off('request', seen);
	const box = `#failure [data-failed-stage="${st.id}"]`;
	eq((await page.textContent(box + ' .fail-class')).trim(), 'boot', 'class');
	expect((await page.textContent(box + ' p')).includes('boot patched'), 'the failed stage is not named');
	const ex = await page.textContent(box + ' pre.excerpt');
	expect(ex.includes('Kernel panic - not syncing: Fatal exception in interrupt'), `excerpt: ${ex}`);
	eq(logRequests, [logPath + '?tail=200'], 'the log requests of the page');
	const where = await page.textContent(box + ' .excerpt-where');
	expect(where.includes('of the last 200'), `the excerpt does not say it is from the log's tail: ${where}`);
	const link = page.locator(box + ' a', { hasText: 'whole console log' });
	eq(await link.getAttribute('href'), logPath, 'the whole console log link');
	const whole = await (await fetch(URL_ + logPath)).text();
	expect(whole.split('\n').length > 300 && whole.startsWith('[    0.000000] Linux version'),
		`the link does not give the whole console log (${whole.split('\n').length} lines)`);
});
await shot(page, 'failed-boot');

// ---- machines ----
await step('machines: health, reason, current job, kernel and recent failures as the API gives them', async () => {
	const ms = (await apiGet('/machines')).machines;
	await page.goto(URL_ + '/machines');
	await page.waitForSelector('#machines-table tbody tr[data-machine]');
	for (const m of ms) {
		const row = `#machines-table tr[data-machine="${m.name}"]`;
		const health = (await page.textContent(row + ' td:nth-child(2) .badge')).trim();
		eq(health, m.health, `${m.name} health`);
		if (m.health_reason) expect((await page.textContent(row)).includes(m.health_reason), `${m.name} reason missing`);
		if (m.kernel) expect((await page.textContent(row)).includes(m.kernel), `${m.name} kernel missing`);
		eq(await page.$$eval(row + ' ul.failures li', (l) => l.length), m.recent_failures.length, `${m.name} recent failures`);
		if (m.leased_by) expect(await page.$(`${row} a[href="/jobs/${m.leased_by}"]`), `${m.name}: no link to job ${m.leased_by}`);
	}
	expect(ms.some((m) => m.health === 'maintenance') && ms.some((m) => m.leased_by), 'the fixture needs a machine in maintenance and a busy one');
});
await shot(page, 'machines');

// ---- submit ----
await step('the submit page offers the suites and trees GET /suites and /trees list', async () => {
	const suites = (await apiGet('/suites')).suites.map((su) => su.name);
	const trees = (await apiGet('/trees')).trees.map((t) => t.name);
	await page.goto(URL_ + '/submit');
	await page.waitForSelector('#submit-form');
	const values = (sel) => page.$$eval(sel + ' option', (os) => os.map((o) => o.value));
	eq(await values('select[name=suite]'), suites, 'suite choices');
	eq(await values('select[name=tree]'), trees, 'tree choices');
	eq(await page.inputValue('select[name=suite]'), 'tlb', 'the suite chosen first');
	expect(suites.includes('hold') && trees.includes('linux'), `the lab's suites ${suites} and trees ${trees}`);
});

await step('the submit page shows the API error when the suites cannot be read, and still offers the trees', async () => {
	await page.route('**/api/v1/suites', (route) => route.fulfill({
		status: 503, contentType: 'application/json',
		body: JSON.stringify({ error: { code: 'unavailable', message: 'suites: the lab is reloading' } }),
	}));
	expectedHttpErrors.add('/api/v1/suites');
	try {
		await page.goto(URL_ + '/submit');
		await page.waitForSelector('#submit-form');
		const b = await page.textContent('#banner');
		expect(b.includes('HTTP 503 unavailable') && b.includes('suites: the lab is reloading') && b.includes('/api/v1/suites'), `banner: ${b}`);
		expect(await page.isDisabled('select[name=suite]'), 'the suite select is usable without suites');
		expect((await page.textContent('select[name=suite]')).includes('the lab is reloading'), 'the suite select does not say why it is empty');
		eq(await page.$$eval('select[name=tree] option', (os) => os.map((o) => o.value)),
			(await apiGet('/trees')).trees.map((t) => t.name), 'tree choices');
	} finally {
		await page.unroute('**/api/v1/suites');
		expectedHttpErrors.delete('/api/v1/suites');
	}
});

const patch = 'diff --git a/arch/x86/mm/tlb.c b/arch/x86/mm/tlb.c\n--- a/arch/x86/mm/tlb.c\n+++ b/arch/x86/mm/tlb.c\n@@ -1 +1 @@\n-a\n+b\n';
await step('submitting without a token is refused: the page shows the 401 and nothing is queued', async () => {
	const before = (await apiGet('/jobs?limit=1')).total;
	await page.goto(URL_ + '/submit');
	await page.waitForSelector('#submit-form');
	await page.evaluate(() => localStorage.removeItem('tlblab.token'));
	await page.fill('input[name=token]', '');
	await page.fill('textarea[name=patch]', patch);
	await page.selectOption('select[name=tree]', 'linux');
	await page.fill('input[name=base]', 'v6.1-debian');
	await page.selectOption('select[name=suite]', 'tlb');
	expectedHttpErrors.add('/api/v1/jobs');
	await page.click('button[type=submit]');
	await page.waitForSelector('#submit-result .err-msg');
	expectedHttpErrors.delete('/api/v1/jobs');
	const msg = await page.textContent('#submit-result .err-msg');
	expect(msg.includes('HTTP 401') && msg.includes('missing or invalid token'), `result: ${msg}`);
	const banner = await page.textContent('#banner');
	expect(banner.includes('HTTP 401') && banner.includes('missing or invalid token'), `banner: ${banner}`);
	eq((await apiGet('/jobs?limit=1')).total, before, 'jobs in the store');
});

let created = null;
await step('submitting with the token creates the job (seen through the API) and keeps the token', async () => {
	await page.fill('input[name=token]', TOKEN);
	await page.check('input[name=remember]');
	await page.check('input[name=source][value=none]');
	expect(await page.isHidden('textarea[name=patch]'), 'the patch field stays shown for a job without a patch');
	await page.selectOption('select[name=suite]', 'hold');
	await page.fill('input[name=submitter]', 'webtest');
	await page.check('input[name=machines][value=m1]');
	await page.click('button[type=submit]');
	await page.waitForSelector('#submit-result .ok-msg');
	created = Number(await page.getAttribute('#submit-result .ok-msg', 'data-job'));
	const job = (await apiGet(`/jobs/${created}`)).job;
	eq([job.submitter, job.suite, job.machines, job.kind], ['webtest', 'hold', ['m1'], 'run'], 'the created job');
	eq(await page.evaluate(() => localStorage.getItem('tlblab.token')), TOKEN, 'stored token');
	expect(await page.$(`#submit-result a[href="/jobs/${created}"]`), 'no link to the new job');
	eq(await page.$$eval('#banner .error', (e) => e.length), 0, 'errors left in the banner after the job was created');
});
await shot(page, 'submit');

await step("the branch and mbox forms send what the API checks: its 400s are shown, nothing is queued", async () => {
	const before = (await apiGet('/jobs?limit=1')).total;
	expectedHttpErrors.add('/api/v1/jobs');
	const tryIt = async (want) => {
		await page.evaluate(() => { document.querySelector('#submit-result').textContent = ''; });
		await page.click('button[type=submit]');
		await page.waitForSelector('#submit-result .err-msg, #submit-result .ok-msg');
		const msg = await page.textContent('#submit-result');
		expect(msg.includes('HTTP 400') && msg.includes(want), `result: ${msg}`);
	};
	await page.selectOption('select[name=suite]', 'tlb');
	await page.check('input[name=source][value=branch]');
	await page.selectOption('select[name=tree]', 'linux');
	await page.fill('input[name=base]', 'v6.1-debian');
	await page.fill('input[name=branch_url]', 'https://git.example.org/linux.git');
	await page.fill('input[name=branch_ref]', 'tlb..fix');
	await tryIt('branch.ref: not a valid git ref');
	await page.check('input[name=source][value=url]');
	await page.fill('input[name=url]', 'ftp://lore.example.org/raw');
	await tryIt('url: must be an http(s) URL');
	expectedHttpErrors.delete('/api/v1/jobs');
	eq((await apiGet('/jobs?limit=1')).total, before, 'jobs in the store');
});

await step('the job page of a queued job offers to cancel it, and the stored token cancels it', async () => {
	await page.goto(URL_ + `/jobs/${created}`);
	await page.waitForSelector('#cancel-job');
	await page.click('#cancel-job');
	await page.waitForFunction(() => document.querySelector('h1 .badge')?.textContent === 'cancelled', null, { timeout: 10000 });
	eq((await apiGet(`/jobs/${created}`)).job.state, 'cancelled', 'state through the API');
});

// ---- errors, other pages ----
await step('API errors are shown: an unknown job gives the 404 and its message', async () => {
	expectedHttpErrors.add('/api/v1/jobs/99999');
	await page.goto(URL_ + '/jobs/99999');
	await page.waitForSelector('#banner .error');
	const b = await page.textContent('#banner');
	expect(b.includes('HTTP 404') && b.includes('no job 99999'), `banner: ${b}`);
	eq(await page.getAttribute('#banner .error', 'role'), 'alert', 'banner role');
});

await step('API errors are shown: a bad filter in the URL gives the 400 and its message', async () => {
	expectedHttpErrors.add('/api/v1/jobs?');
	await page.goto(URL_ + '/jobs?state=bogus');
	await page.waitForSelector('#banner .error');
	const b = await page.textContent('#banner');
	expect(b.includes('HTTP 400') && b.includes('state: one of'), `banner: ${b}`);
	expectedHttpErrors.delete('/api/v1/jobs?');
});

await step('the tracks page: the track and its alert as the API gives them; triage goes through the API', async () => {
	const tr = (await apiGet('/tracks')).tracks;
	await page.goto(URL_ + '/tracks');
	await page.waitForSelector('#tracks-table tbody tr[data-track]');
	eq(await page.$$eval('#tracks-table tbody tr[data-track]', (e) => e.map((r) => r.dataset.track)), tr.map((t) => t.name), 'track rows');
	const row = await page.textContent('#tracks-table tr[data-track="nightly"]');
	expect(row.includes('master') && row.includes('0 3 1 1 *') && row.includes('unchanged: measured already') &&
		row.includes('000000000000'), `track row: ${row}`);
	const al = await page.textContent('#alerts-table tr[data-alert-row="1"]');
	expect(al.includes('regression') && al.includes('mm: change 8') && al.includes('new'), `alert row: ${al}`);
	await page.click('#alerts-table button[data-alert="1"][data-state="acknowledged"]');
	await page.waitForFunction(() => document.querySelector('#alerts-table tr[data-alert-row="1"]')?.textContent.includes('by dashboard'));
	const a = (await apiGet('/alerts/1'));
	eq([a.state, a.state_by], ['acknowledged', 'dashboard'], 'the alert through the API');
	eq(await page.$$eval('main canvas', (e) => e.length), 0, 'charts on the tracks page');
});
await shot(page, 'tracks');

await step('a series page charts its points with the change point marked, and lists both', async () => {
	const s = await apiGet('/series/1');
	await page.goto(URL_ + '/tracks/nightly');
	await page.waitForSelector('#series-table a[href="/series/1"]');
	await page.click('#series-table a[href="/series/1"]');
	await page.waitForSelector('#series-chart canvas');
	eq(await page.getAttribute('#series-chart', 'data-change-points'), '1', 'change points marked');
	eq(await page.$$eval('#values-table tbody tr', (e) => e.length), s.values.length, 'point rows');
	const cp = await page.textContent('#cp-table tbody tr');
	expect(cp.includes('confirmed') && cp.includes('regression') && cp.includes('-15.0%'), `change point row: ${cp}`);
	const box = await page.locator('#series-chart canvas').boundingBox();
	await page.mouse.move(box.x + box.width * 0.6, box.y + box.height / 2);
	await page.waitForFunction(() => /mm: change \d+/.test(document.querySelector('.series-hover')?.textContent || ''));
});
await shot(page, 'series');

await step('an alert links its bisection; the bisection page shows its steps, result and report as the API gives them', async () => {
	const b = await apiGet('/bisections/1');
	const report = await (await fetch(URL_ + '/api/v1/bisections/1/report.txt')).text();
	await page.goto(URL_ + '/tracks');
	await page.waitForSelector('#alerts-table a[href="/bisections/1"]');
	await page.click('#alerts-table a[href="/bisections/1"]');
	await page.waitForSelector('#steps-table tbody tr[data-step]');
	eq(await page.$$eval('#steps-table tbody tr[data-step]', (e) => e.length), b.steps.length, 'step rows');
	const first = await page.textContent('#b-result');
	expect(first.includes(b.first_bad.slice(0, 12)) && first.includes('mm: flush every CPU'), `result: ${first}`);
	const bad = await page.textContent(`#steps-table tr[data-step="${b.steps[2].id}"]`);
	expect(bad.includes('bad') && bad.includes('regression') && bad.includes('-15.1%') && bad.includes('same'), `step row: ${bad}`);
	eq(await page.textContent('#b-report'), report, 'the report is the API\'s text');
	expect(!(await page.$('#b-cancel')), 'a bisection that ended has no cancel button');
	await page.goto(URL_ + '/bisections');
	await page.waitForSelector('#bisections-table tr[data-bisection="1"]');
	const row = await page.textContent('#bisections-table tr[data-bisection="1"]');
	expect(row.includes('done') && row.includes('mprotect.ops_per_sec') && row.includes('first bad'), `list row: ${row}`);
	await page.goto(URL_ + '/series/1');
	await page.waitForSelector('#cp-table a[href="/bisections/1"]');
});
await shot(page, 'bisection');

await step('an unknown page says so, with a way back', async () => {
	await page.goto(URL_ + '/no/such/page');
	expect((await page.textContent('h1')).includes('No such page'), 'heading');
	expect(await page.$('main a[href="/jobs"]'), 'no link back');
});

// ---- dark, contrast ----
const badgeContrast = (p) => p.evaluate(() => ['regression', 'improvement'].flatMap((v) =>
	[...document.querySelectorAll(`.badge.v-${v}`)].slice(0, 4).map((b) => {
		const cs = getComputedStyle(b);
		return [b.textContent.trim(), cs.color, cs.backgroundColor];
	})));
await step('regression and improvement badges are readable in light (contrast >= 4.5)', async () => {
	await page.goto(URL_ + '/jobs/1');
	await page.waitForSelector('#cmp-table');
	const bs = await badgeContrast(page);
	expect(bs.some((b) => b[0].includes('regression')) && bs.some((b) => b[0].includes('improvement')), 'both badges should be on the page');
	for (const [t, fg, bg] of bs) expect(contrast(fg, bg) >= 4.5, `${t}: ${fg} on ${bg} is ${contrast(fg, bg).toFixed(2)}`);
});

const dark = await newContext('dark');
const dpage = await dark.newPage();
await step('dark scheme: a dark page, and the badges are readable (contrast >= 4.5)', async () => {
	await dpage.goto(URL_ + '/jobs/1');
	await dpage.waitForSelector('#cmp-table');
	await complete(dpage);
	const bg = await dpage.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
	expect(contrast(bg, 'rgb(0, 0, 0)') < 2, `the page background ${bg} is not dark`);
	const bs = await badgeContrast(dpage);
	expect(bs.some((b) => b[0].includes('regression')) && bs.some((b) => b[0].includes('improvement')), 'both badges should be on the page');
	for (const [t, fg, bgc] of bs) expect(contrast(fg, bgc) >= 4.5, `${t}: ${fg} on ${bgc} is ${contrast(fg, bgc).toFixed(2)}`);
	await shot(dpage, 'job-dark');
	await dpage.goto(URL_ + '/jobs');
	await dpage.waitForSelector('#jobs-table tbody tr[data-job]');
	await shot(dpage, 'jobs-dark');
	await dpage.goto(URL_ + '/jobs/2');
	await complete(dpage);
	await shot(dpage, 'failed-build-dark');
});

// ---- 1280x800: pages that fit ----
// Measured, not eyeballed: the document is no wider than the window, no
// element scrolls sideways, no table, pre, figure or list sticks out of
// its container; a comparison row is one line until it is opened.
const narrow = await newContext('light', { width: 1280, height: 800 });
const npage = await narrow.newPage();
const rendered = (p) => p.waitForFunction(() => performance.getEntriesByName('tlblab:page-rendered').length > 0, null, { timeout: 15000 });
const overflow = (p) => p.evaluate(() => {
	const name = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
		(typeof el.className === 'string' && el.className.trim() ? '.' + el.className.trim().split(/\s+/).join('.') : '');
	const scrollers = [], wide = [];
	for (const el of document.querySelectorAll('body *')) {
		const ox = getComputedStyle(el).overflowX;
		if ((ox === 'auto' || ox === 'scroll') && el.scrollWidth > el.clientWidth)
			scrollers.push(`${name(el)} scrolls ${el.scrollWidth - el.clientWidth} px sideways`);
	}
	for (const el of document.querySelectorAll('main table, main pre, main figure, main dl')) {
		const r = el.getBoundingClientRect(), box = el.parentElement.getBoundingClientRect();
		if (r.width && (r.left < box.left - 0.5 || r.right > box.right + 0.5))
			wide.push(`${name(el)} at ${r.left.toFixed(0)}..${r.right.toFixed(0)} in ${name(el.parentElement)} at ${box.left.toFixed(0)}..${box.right.toFixed(0)}`);
	}
	const de = document.documentElement;
	return { scrollWidth: de.scrollWidth, clientWidth: de.clientWidth, tables: document.querySelectorAll('main table').length, scrollers, wide };
});
const fits = (o, what) => {
	expect(o.scrollWidth <= o.clientWidth, `${what}: the document is ${o.scrollWidth} px wide in a ${o.clientWidth} px window`);
	eq(o.scrollers, [], `${what}: elements that scroll sideways`);
	eq(o.wide, [], `${what}: elements wider than their container`);
};
// each page with what shows it rendered its data
for (const [path, what, shotName, sel] of [
	['/jobs', 'the jobs list', 'fit-jobs', '#jobs-table tr[data-job]'],
	['/jobs/1', 'an A/B job', 'fit-job', '#profile-table tbody tr'],
	['/jobs/2', 'a failed job', 'fit-job-failed', 'pre.excerpt mark'],
	['/jobs/6', 'a job of a per-patch series', 'fit-per-patch', '#per-patch tbody tr'],
	['/tracks', 'the tracks', 'fit-tracks', '#alerts-table tr[data-alert-row]'],
	['/tracks/nightly', 'a track', 'fit-track', '#series-table a[href^="/series/"]'],
	['/series/1', 'a series', 'fit-series', '#series-chart canvas'],
	['/bisections', 'the bisections', 'fit-bisections', '#bisections-table tr[data-bisection]'],
	['/bisections/1', 'a bisection', 'fit-bisection', '#steps-table tr[data-step]'],
]) {
	await step(`1280x800: ${what} (${path}) fits the window, nothing scrolls sideways`, async () => {
		await npage.goto(URL_ + path);
		await rendered(npage);
		expect(await npage.$(sel), `${sel}: not on the page`);
		const o = await overflow(npage);
		console.log(`# ${path} at 1280x800: document ${o.scrollWidth} px wide in a ${o.clientWidth} px window, ${o.tables} tables`);
		fits(o, path);
		await shot(npage, shotName);
	});
}

await step('a per-patch series: job 6\'s page names the patch that moved each headline row (patch 2, never patch 1)', async () => {
	const pp = (await apiGet('/jobs/6/per-patch')).per_patch;
	await npage.goto(URL_ + '/jobs/6');
	await rendered(npage);
	const moved = await npage.$$eval('#per-patch tbody tr', (trs) => trs.map((tr) => tr.lastElementChild.textContent.trim()));
	eq(moved, pp.rows.map((r) => (r.moved_by.length ? r.moved_by.map((k) => `patch ${k}`).join(', ') : 'none')), 'moved-by cells');
	const ops = pp.rows.filter((r) => r.metric === 'mprotect.ops_per_sec');
	expect(ops.some((r) => r.moved_by.join() === '2') && !ops.some((r) => r.moved_by.includes(1)),
		`ops/s rows moved by: ${JSON.stringify(ops.map((r) => [r.params_text, r.moved_by, r.steps.map((c) => c && c.verdict)]))}`);
	console.log(`# job 6 per patch: ${ops.map((r) => `${r.params_text}: ${r.steps.map((c) => c && `${c.change_pct.toFixed(1)}% ${c.verdict}`).join(' | ')}`).join('; ')}`);
});

// A line of the comparison (13 px text at line-height 1.45, and its padding)
// is about 30 px tall; two lines would be about 48.
const ROW_MAX = 32;
const byDefault = defaultOrder.filter((i) => group(cmp.rows[i]) < 2);
const cmpRowsAt = (p) => p.$$eval('#cmp-table tbody tr[data-i]', (trs) => trs.map((tr) => ({
	i: Number(tr.dataset.i), shown: tr.offsetParent !== null, h: tr.getBoundingClientRect().height,
	cells: Object.fromEntries(['c-base', 'c-patched', 'change', 'ci', 'c-p', 'c-padj', 'c-verdict', 'c-class', 'c-boots']
		.map((c) => [c, tr.querySelector('td.' + c)?.textContent.trim() ?? null])),
	// cells whose text the line cuts: only workload, params and metric may be (whole in the details line)
	cut: [...tr.cells].filter((td) => !td.matches('.c-workload, .params, .metric') && td.scrollWidth > td.clientWidth).map((td) => td.className),
})));
// the numbers a cell shows, as the page formats them (1,234.5 -1.2% 3.4e-5)
const numbers = (s) => (s.match(/[-+]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?/g) || []).map((x) => Number(x.replace(/,/g, '')));
const near = (got, want, rel, abs) => got !== undefined && Math.abs(got - want) <= Math.max(Math.abs(want) * rel, abs);

await step(`1280x800: job 1 shows its ${byDefault.length} headline and changed rows first, the other ${cmp.rows.length - byDefault.length} behind "show all", every row one line`, async () => {
	const headSame = cmp.rows.filter((r) => r.headline && unchanged(r.verdict)).length;
	expect(headSame > 0 && byDefault.length > headSame && byDefault.length < cmp.rows.length,
		`the fixture needs a headline row that is the same, changed rows and unchanged ones (${headSame}, ${byDefault.length} of ${cmp.rows.length})`);
	await npage.goto(URL_ + '/jobs/1');
	await rendered(npage);
	const first = await cmpRowsAt(npage);
	eq(first.map((r) => r.i), defaultOrder, 'the order of the rows (API indexes)');
	eq(first.filter((r) => r.shown).map((r) => r.i), byDefault, 'the rows shown at first');
	const toggle = (await npage.textContent('#fold-toggle')).trim();
	expect(toggle.includes(`all ${cmp.rows.length} rows`), `the toggle says "${toggle}"`);
	const hs = first.filter((r) => r.shown).map((r) => r.h);
	await npage.click('#fold-toggle');
	const all = await cmpRowsAt(npage);
	eq(all.filter((r) => !r.shown).map((r) => r.i), [], 'rows still hidden after "show all"');
	const tall = all.filter((r) => r.h > ROW_MAX).map((r) => `${cmp.rows[r.i].metric} ${cmp.rows[r.i].params_text}: ${r.h} px`);
	eq(tall, [], `rows taller than ${ROW_MAX} px`);
	const h = all.map((r) => r.h);
	fits(await overflow(npage), 'job 1 with every row shown');
	const table = await npage.evaluate(() => document.querySelector('#cmp-table').getBoundingClientRect().height);
	console.log(`# job 1 at 1280x800: ${byDefault.length} of ${cmp.rows.length} rows shown at first (${cmp.rows.filter((r) => r.headline).length} headline, ` +
		`${byDefault.length - cmp.rows.filter((r) => r.headline).length} other changed), all ${cmp.rows.length} after "show all"; ` +
		`row height ${Math.min(...h).toFixed(1)}..${Math.max(...h).toFixed(1)} px (at first ${Math.min(...hs).toFixed(1)}..${Math.max(...hs).toFixed(1)}), table ${table.toFixed(0)} px tall with every row`);
	await npage.click('#fold-toggle');
});

await step('1280x800: a one-line row still shows each side\'s value, the change, the CI, p and p adj., the verdict, the class and the boots, none cut', async () => {
	await npage.click('#fold-toggle');
	const rows = await cmpRowsAt(npage);
	await npage.click('#fold-toggle');
	for (const row of rows) {
		const r = cmp.rows[row.i], c = row.cells, what = `row ${row.i} (${r.metric} ${r.params_text})`;
		for (const side of ['base', 'patched']) {
			if (r[side].center === null) expect(!/\d/.test(c['c-' + side]), `${what}: ${side} should be a dash: ${c['c-' + side]}`);
			else expect(near(numbers(c['c-' + side])[0], r[side].center, 0.01, 0.0051), `${what}: ${side} "${c['c-' + side]}", API ${r[side].center}`);
		}
		if (r.change_pct !== null) expect(near(numbers(c.change)[0], r.change_pct, 0.001, 0.051), `${what}: change "${c.change}", API ${r.change_pct}`);
		if (r.ci) expect(near(numbers(c.ci)[0], r.ci[0], 0.001, 0.051) && near(numbers(c.ci)[1], r.ci[1], 0.001, 0.051), `${what}: CI "${c.ci}", API ${r.ci}`);
		else if (typeof r.change_abs === 'number' && r.ci_abs) expect(c.ci.endsWith(r.unit || ''), `${what}: CI in the row's unit: ${c.ci}, API ${r.ci_abs}`);
		else expect(!/\d/.test(c.ci), `${what}: CI should be a dash: ${c.ci}`);
		for (const [k, v] of [['c-p', r.p], ['c-padj', r.p_adj]]) {
			if (v === null || v === undefined) expect(!/\d/.test(c[k]), `${what}: ${k} should be a dash: ${c[k]}`);
			else expect(near(numbers(c[k])[0], v, 0.05, 0.00051), `${what}: ${k} "${c[k]}", API ${v}`);
		}
		expect(c['c-verdict'].includes(r.verdict), `${what}: verdict "${c['c-verdict']}", API ${r.verdict}`);
		eq(c['c-class'], r.class, `${what}: class`);
		eq(numbers(c['c-boots']), [r.base.n, r.patched.n], `${what}: boots`);
		eq(row.cut, [], `${what}: cells cut short`);
	}
});

await step('1280x800: an opened row shows the rest in a details line (params, unit, spread, p method, detectable change, reason, outliers) and folds again', async () => {
	// a headline row with a reason and outliers: the most a row carries
	const i = cmp.rows.findIndex((r) => r.headline && r.reason && r.outliers);
	expect(i >= 0, 'the fixture needs a headline row with a reason and outliers');
	const r = cmp.rows[i];
	const open = `#cmp-table tr[data-i="${i}"] button.open`;
	const detail = `#cmp-table tr.detail[data-of="${i}"]`;
	expect(!(await npage.$(detail)), 'a details line before the row is opened');
	await npage.click(open);
	eq(await npage.getAttribute(open, 'aria-expanded'), 'true', 'aria-expanded of the opened row');
	const text = await npage.textContent(detail);
	const params = r.params_text.split(' ').filter((kv) => !kv.startsWith('workload=')).join(' ');
	for (const want of [params, r.reason, r.unit, `${r.outliers} outlier`, `${r.base.n} boots`, r.p_method, `\u00b1${r.base.spread_pct.toFixed(1)}%`,
		`\u00b1${r.patched.spread_pct.toFixed(1)}%`, `\u00b1${r.mde_pct.toFixed(1)}%`, r.p_adj_method === 'holm' ? 'Holm' : 'Benjamini-Hochberg',
		// the interval's level: the row's own where it has one (a bootstrap of
		// so few boots that it cannot reach the rules' level), else the rules'
		`${Math.round(100 * (r.ci_level || cmp.rules.ci_level))}% CI`])
		expect(text.includes(want), `the details line lacks "${want}": ${text}`);
	const h = await npage.evaluate((k) => [document.querySelector(`#cmp-table tr[data-i="${k}"]`).getBoundingClientRect().height,
		document.querySelector(`#cmp-table tr.detail[data-of="${k}"]`).getBoundingClientRect().height], i);
	expect(h[0] <= ROW_MAX, `the opened row itself is ${h[0]} px tall`);
	fits(await overflow(npage), 'job 1 with a row opened');
	console.log(`# job 1 at 1280x800: an opened row is ${h[0].toFixed(1)} px and its details line ${h[1].toFixed(1)} px tall`);
	await shot(npage, 'fit-job-opened');
	await npage.click(open);
	expect(!(await npage.$(detail)), 'the details line stays after the row is folded');
	eq(await npage.getAttribute(open, 'aria-expanded'), 'false', 'aria-expanded of the folded row');
});

// ---- everything that happened in the browser ----
await step('no request left the daemon (no CDN, no fonts)', async () => {
	eq(offsite, [], 'requests elsewhere');
});
await step('the console shows no errors and no page threw', async () => {
	eq(consoleErrors, [], 'console errors');
});

await browser.close();
console.log(`# screenshots: ${ART}`);
console.log(`1..${n}`);
process.exit(failures ? 1 : 0);
