// Tracks: nightly tracking of mainline is not in tlblabd yet; this page says
// so and shows nothing else.
export async function render(ctx) {
	ctx.title('tracks');
	ctx.main.innerHTML = `<h1>Tracks</h1>
<p id="tracks-missing">Nightly tracking of a branch (the <code>tracks:</code> section of the configuration: a build of
the branch head on a schedule, one point per series, change points, bisection) is not in tlblabd yet.
This page will show the series when it lands.</p>
<p>Until then, compare two jobs that ran the same suite with
<code>GET /api/v1/compare?base=A&amp;patched=B</code>, or submit an A/B job on the <a href="/submit">Submit</a> page.</p>`;
}
