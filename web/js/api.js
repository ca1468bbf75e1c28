// The only place that talks to tlblabd. A failed request becomes an
// ApiError carrying the HTTP status and the API's error.code and
// error.message, for the page to show.

export class ApiError extends Error {
	constructor(status, code, message, method, path) {
		super(message);
		this.name = 'ApiError';
		this.status = status;
		this.code = code;
		this.method = method;
		this.path = path;
	}
}

const TOKEN_KEY = 'tlblab.token';

export function storedToken() {
	try {
		return localStorage.getItem(TOKEN_KEY) || '';
	} catch {
		return '';
	}
}

export function storeToken(t) {
	try {
		if (t) localStorage.setItem(TOKEN_KEY, t);
		else localStorage.removeItem(TOKEN_KEY);
	} catch {
		/* private mode: the token lives in the form only */
	}
}

// api('/jobs?state=done') -> parsed JSON. opts: method, body (an object,
// sent as JSON), token (overrides the stored one; '' sends none), text
// (return the body as text), signal.
export async function api(path, opts = {}) {
	const method = opts.method || 'GET';
	const headers = {};
	const token = opts.token !== undefined ? opts.token : storedToken();
	if (token) headers.Authorization = 'Bearer ' + token;
	let body;
	if (opts.body !== undefined) {
		headers['Content-Type'] = 'application/json';
		body = JSON.stringify(opts.body);
	}
	const url = '/api/v1' + path;
	let res;
	try {
		res = await fetch(url, { method, headers, body, signal: opts.signal, cache: 'no-store' });
	} catch (e) {
		if (e.name === 'AbortError') throw e;
		throw new ApiError(0, 'network', 'cannot reach tlblabd: ' + e.message, method, url);
	}
	if (!res.ok) {
		let code = 'http_' + res.status, message = res.statusText || 'request failed';
		const text = await res.text().catch(() => '');
		try {
			const j = JSON.parse(text);
			if (j && j.error) {
				code = j.error.code || code;
				message = j.error.message || message;
			}
		} catch {
			if (text) message = text.slice(0, 300);
		}
		throw new ApiError(res.status, code, message, method, url);
	}
	return opts.text ? res.text() : res.json();
}
