// Submit: POST /api/v1/jobs with the token as "Authorization: Bearer". The
// token is kept in this browser's localStorage when asked to; every check
// of the request is the API's, and its answer is shown as it is. The suites
// and trees to choose from are the configured ones (GET /suites, /trees).
import { api, storedToken, storeToken } from './api.js';
import { esc } from './util.js';

const SUBMITTER_KEY = 'tlblab.submitter';

function remembered(key) {
	try {
		return localStorage.getItem(key) || '';
	} catch {
		return '';
	}
}

// The choices a select offers: what the API lists, or, when it cannot be
// read, the error (shown in the banner too) and nothing to choose.
async function choices(ctx, path, key, what) {
	try {
		return { list: (await api(path, { signal: ctx.signal }))[key] };
	} catch (err) {
		if (err.name === 'AbortError') throw err;
		ctx.error(err, what);
		return { list: [], err };
	}
}

function selectHtml(name, c, label, pick) {
	if (c.err)
		return `<select name="${name}" disabled><option value="">could not load the ${esc(name)}s: ${esc(c.err.message)}</option></select>`;
	if (!c.list.length)
		return `<select name="${name}" disabled><option value="">no ${esc(name)}s configured</option></select>`;
	return `<select name="${name}">${c.list.map((x) => `<option value="${esc(x.name)}"${x.name === pick ? ' selected' : ''}>${esc(label(x))}</option>`).join('')}</select>`;
}

export async function render(ctx) {
	ctx.title('submit');
	const [machines, recent, suites, trees] = await Promise.all([
		api('/machines', { signal: ctx.signal }),
		api('/jobs?limit=200', { signal: ctx.signal }),
		choices(ctx, '/suites', 'suites', 'the suites to choose from'),
		choices(ctx, '/trees', 'trees', 'the trees to choose from'),
	]);
	const bases = [...new Set(recent.jobs.map((j) => j.base).filter(Boolean))].sort();
	const lastAb = recent.jobs.find((j) => j.kind === 'ab');
	const token = storedToken();
	const opts = (l) => l.map((v) => `<option value="${esc(v)}">`).join('');
	const suiteLabel = (su) => `${su.name} (${(su.workloads || []).map((w) => w.workload).filter(Boolean).join(', ') || 'no workloads'})`;
	const treeLabel = (t) => `${t.name} (builder ${t.builder})`;

	ctx.main.innerHTML = `<h1>Submit a job</h1>
<form id="submit-form" class="submit" novalidate>
<fieldset class="source">
  <legend>What to test</legend>
  <label><input type="radio" name="source" value="patch" checked> a patch (diff or format-patch mbox)</label>
  <label><input type="radio" name="source" value="branch"> a git branch</label>
  <label><input type="radio" name="source" value="url"> an mbox URL (lore, patchwork)</label>
  <label><input type="radio" name="source" value="none"> no patch: the suite on machines as they are</label>
</fieldset>
<div class="ab-only grid2">
  <label>Tree ${selectHtml('tree', trees, treeLabel, lastAb && lastAb.tree)}</label>
  <label>Base (git ref) <input name="base" list="dl-bases" value="${esc(lastAb ? lastAb.base : '')}" autocomplete="off" placeholder="the lab's default"></label>
</div>
<div class="src src-patch">
  <label for="f-patch">Patch</label>
  <textarea id="f-patch" name="patch" rows="12" spellcheck="false" placeholder="Paste the output of git format-patch or git diff"></textarea>
  <label class="small">or read a file <input type="file" id="f-patch-file" accept=".patch,.diff,.mbox,.txt,text/*"></label>
</div>
<div class="src src-branch grid2" hidden>
  <label>Repository URL <input name="branch_url" autocomplete="off" placeholder="https://git.kernel.org/pub/scm/linux/kernel/git/..."></label>
  <label>Ref <input name="branch_ref" autocomplete="off" placeholder="tlb-fix"></label>
</div>
<div class="src src-url" hidden>
  <label>mbox URL <input name="url" autocomplete="off" placeholder="https://lore.kernel.org/.../raw"></label>
</div>
<div class="grid2">
  <label>Suite ${selectHtml('suite', suites, suiteLabel, 'tlb')}</label>
  <label>Submitter <input name="submitter" value="${esc(remembered(SUBMITTER_KEY))}" autocomplete="off" placeholder="your name (letters, digits, . _ -)"></label>
  <label>Boots <span class="small muted">(per side for A/B)</span> <input name="boots" type="number" min="1" max="100" placeholder="5 for A/B, 1 otherwise"></label>
  <label>Max boots <span class="small muted">(more while inconclusive)</span> <input name="max_boots" type="number" min="1" max="100"></label>
</div>
<fieldset class="machines">
  <legend>Machines <span class="small muted">(none ticked: any that fits)</span></legend>
  ${machines.machines.map((m) => `<label><input type="checkbox" name="machines" value="${esc(m.name)}"> ${esc(m.name)} <span class="small muted">${esc(m.health)}${m.leased_by ? ', busy' : ''}</span></label>`).join('') || '<span class="muted">no machines configured</span>'}
  <label class="tags">Tags <input name="tags" autocomplete="off" placeholder="qemu, x86 (comma-separated)"></label>
</fieldset>
<fieldset class="token">
  <legend>Token</legend>
  <label>API token <input name="token" type="password" value="${esc(token)}" autocomplete="off" spellcheck="false"></label>
  <label class="small"><input type="checkbox" name="remember" ${token ? 'checked' : ''}> remember it in this browser (localStorage)</label>
  <button type="button" id="forget-token" class="linklike small">forget the stored token</button>
</fieldset>
<p><button type="submit" class="primary">Submit job</button></p>
<div id="submit-result" role="status" aria-live="polite"></div>
<datalist id="dl-bases">${opts(bases)}</datalist>
</form>`;

	const form = ctx.main.querySelector('form');
	const result = ctx.main.querySelector('#submit-result');
	const sync = () => {
		const src = form.elements.source.value;
		for (const el of form.querySelectorAll('.src')) el.hidden = !el.classList.contains('src-' + src);
		form.querySelector('.ab-only').hidden = src === 'none';
	};
	for (const r of form.elements.source) r.addEventListener('change', sync);
	sync();
	ctx.main.querySelector('#f-patch-file').addEventListener('change', async (ev) => {
		const f = ev.target.files[0];
		if (f) form.elements.patch.value = await f.text();
	});
	ctx.main.querySelector('#forget-token').addEventListener('click', () => {
		storeToken('');
		form.elements.token.value = '';
		form.elements.remember.checked = false;
		result.innerHTML = '<p class="muted">The stored token is forgotten.</p>';
	});

	form.addEventListener('submit', async (ev) => {
		ev.preventDefault();
		const e = form.elements, src = e.source.value;
		const body = { suite: e.suite.value };
		if (e.submitter.value.trim()) body.submitter = e.submitter.value.trim();
		const ms = [...form.querySelectorAll('input[name=machines]:checked')].map((c) => c.value);
		if (ms.length) body.machines = ms;
		const tags = e.tags.value.split(',').map((t) => t.trim()).filter(Boolean);
		if (tags.length) body.tags = tags;
		if (src !== 'none') {
			body.tree = e.tree.value;
			// left empty, the daemon takes the lab's defaults: base (or says there is none)
			if (e.base.value.trim()) body.base = e.base.value.trim();
			if (src === 'patch') body.patch = e.patch.value;
			if (src === 'branch') body.branch = { url: e.branch_url.value.trim(), ref: e.branch_ref.value.trim() };
			if (src === 'url') body.url = e.url.value.trim();
		}
		if (e.boots.value) body.boots = Number(e.boots.value);
		if (e.max_boots.value) body.max_boots = Number(e.max_boots.value);
		const tok = e.token.value.trim();
		const button = form.querySelector('button[type=submit]');
		button.disabled = true;
		result.innerHTML = '<p class="muted">Submitting\u2026</p>';
		try {
			const res = await api('/jobs', { method: 'POST', body, token: tok, signal: ctx.signal });
			storeToken(e.remember.checked ? tok : '');
			try {
				if (body.submitter) localStorage.setItem(SUBMITTER_KEY, body.submitter);
			} catch { /* no storage: nothing to remember */ }
			const j = res.job;
			ctx.clearErrors();	// a refusal shown before is answered now
			result.innerHTML = `<p class="ok-msg" data-job="${esc(j.id)}">Job <a href="/jobs/${esc(j.id)}">#${esc(j.id)}</a> is ${esc(j.state)} (${esc(j.kind === 'ab' ? 'A/B' : 'run')}, suite ${esc(j.suite)}).</p>`;
		} catch (err) {
			if (err.name === 'AbortError') return;
			result.innerHTML = `<p class="err-msg" data-status="${esc(err.status)}"><strong>${err.status ? `HTTP ${esc(err.status)} ${esc(err.code)}` : 'Error'}</strong>: ${esc(err.message)}` +
				(err.status === 401 ? ' \u2014 give a valid token above.' : '') + '</p>';
			ctx.error(err, 'submit');
		} finally {
			button.disabled = false;
		}
	});
}
