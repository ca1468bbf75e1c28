// Debian's chromium, headless, driven by playwright-core from web/node_modules
// (npm ci, by scripts/deps.sh). Shared by the dashboard test and its bench.
import { existsSync } from 'node:fs';

const here = new URL('.', import.meta.url);
const pw = new URL('../../web/node_modules/playwright-core/index.mjs', here);

export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

export async function launch() {
	if (!existsSync(pw)) throw new Error(`${pw.pathname} is missing: run npm ci in web/ (sh scripts/deps.sh test)`);
	if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium (sh scripts/deps.sh test)`);
	const { chromium } = await import(pw.href);
	return chromium.launch({
		executablePath: CHROMIUM,
		args: ['--no-sandbox', '--headless=new', '--disable-gpu', '--disable-dev-shm-usage',
			'--disable-background-networking', '--disable-component-update', '--no-first-run'],
	});
}
