// First render of a job page in Debian's chromium: from navigation start to
// the comparison table in the DOM (the app's performance mark
// "tlblab:table-rendered"), HTTP cache off, median of LOADS loads after one
// warm-up. Prints figures; asserts nothing about time.
//   node render.bench.mjs URL [LOADS]
import { readFileSync } from 'node:fs';
import { launch } from './browser.mjs';

const url = process.argv[2];
const loads = Number(process.argv[3] || 10);
const median = (xs) => {
	const v = [...xs].sort((a, b) => a - b), m = v.length >> 1;
	return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
};

const browser = await launch();
const ctx = await browser.newContext({ viewport: { width: 1400, height: 900 } });
const page = await ctx.newPage();
const errors = [];
page.on('pageerror', (e) => errors.push(e.message));
page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
const cdp = await ctx.newCDPSession(page);
await cdp.send('Network.enable');
await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });

const mark = (name) => page.evaluate((n) => performance.getEntriesByName(n)[0]?.startTime ?? null, name);
const t = { data: [], table: [], complete: [] };
let rows = 0;
for (let i = 0; i <= loads; i++) {
	await page.goto(url);
	await page.waitForFunction(() => performance.getEntriesByName('tlblab:page-complete').length > 0, null, { timeout: 30000 });
	if (i === 0) {
		rows = await page.$$eval('#cmp-table tbody tr', (r) => r.length);
		continue;
	}
	t.data.push(await mark('tlblab:job-data'));
	t.table.push(await mark('tlblab:table-rendered'));
	t.complete.push(await mark('tlblab:page-complete'));
}
// the same run's baseline: the page with no data (tracks), to tell the
// browser's and the daemon's share from the job page's own
const base = [];
const tracks = new URL('/tracks', url).href;
for (let i = 0; i <= loads; i++) {
	await page.goto(tracks);
	await page.waitForFunction(() => performance.getEntriesByName('tlblab:page-rendered').length > 0, null, { timeout: 30000 });
	if (i) base.push(await mark('tlblab:page-rendered'));
}
await browser.close();
if (errors.length) {
	console.log('bench: the page logged errors: ' + errors.join('; '));
	process.exit(1);
}
const f = (v) => v.toFixed(1);
const m = median(t.table);
// the machine's other work shows in these figures: say how busy it was
const load = readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
console.log(`job page, ${rows} comparison rows, ${loads} loads, HTTP cache off (ms after navigation start, medians; load average ${load}):`);
console.log(`  job and comparison fetched ${f(median(t.data))}; table in the DOM ${f(m)} (min ${f(Math.min(...t.table))}, max ${f(Math.max(...t.table))}); charts and logs done ${f(median(t.complete))}`);
console.log(`  a page with no data (/tracks) renders at ${f(median(base))}: the job page's own share is ${f(m - median(base))}`);
console.log(`  first render ${f(m)} ms against the 300 ms target: ${(m / 300).toFixed(2)} of it`);
