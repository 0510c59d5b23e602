'use strict';
/* The BullMQ relay the benchmark compares pixrelay with (tests/bench/peer.py,
 * docs/performance.md): what a team would write in an afternoon on BullMQ.
 *
 *   node relay.js --redis SOCKET [--listen 1] [--worker 1] [--sink URL]
 *                 [--secret S] [--concurrency 64]
 *
 * --listen 1: an HTTP server on 127.0.0.1 (a port the system chooses, printed
 * as "port N" on stdout) taking what wrk sends pixrelay: POST
 * /v1/webhooks/ingest/<account> with the header `signature` (the ingest
 * secret) and a JSON notification. It checks the secret, parses the body,
 * takes its "id" as the job id (BullMQ ignores an add whose job id exists:
 * the upstream id deduplicated, as pixrelay does), adds a job carrying the
 * body as received with `attempts` and exponential backoff, and answers 200
 * only once the add has resolved (Redis has answered, after its fsync under
 * appendfsync always).
 *
 * --worker 1: a BullMQ Worker, 64 jobs at once, that POSTs each job's body to
 * the sink over kept-alive connections, with the header webhook-id (the job
 * id), and throws on anything but 2xx, so that BullMQ retries it.
 *
 * Everything else is BullMQ's defaults (completed jobs kept, as pixrelay keeps
 * delivered events; its events stream; lock renewal and stalled-job checks).
 * SIGTERM ends it at once.
 */
const http = require('http');
const { Queue, Worker } = require('bullmq');
const IORedis = require('ioredis');

const QUEUE = 'postbacks';
const PREFIX = '/v1/webhooks/ingest/';

function parseArgs(argv) {
	const o = { listen: '0', worker: '0', secret: '', concurrency: '64', sink: '' };
	for (let i = 2; i + 1 < argv.length; i += 2)
		o[argv[i].replace(/^--/, '')] = argv[i + 1];
	if (!o.redis) {
		process.stderr.write('usage: node relay.js --redis SOCKET [--listen 1] [--worker 1] ...\n');
		process.exit(2);
	}
	return o;
}

function connection(path) {
	/* a Worker's connections must retry forever (BullMQ asks for null) */
	return new IORedis({ path, maxRetriesPerRequest: null });
}

function reply(res, status, obj) {
	const body = JSON.stringify(obj);
	res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
	res.end(body);
}

function serve(opts) {
	const queue = new Queue(QUEUE, { connection: connection(opts.redis) });
	/* pixrelay's policy as near as BullMQ's exponential backoff (2^n, no cap) comes:
	 * 15 attempts in all, the first retry after 5 s */
	const jobOpts = { attempts: 15, backoff: { type: 'exponential', delay: 5000 } };
	const server = http.createServer((req, res) => {
		if (req.method !== 'POST' || !req.url.startsWith(PREFIX)) {
			reply(res, 404, { error: 'not found' });
			return;
		}
		const chunks = [];
		req.on('data', (c) => chunks.push(c));
		req.on('end', () => {
			if (req.headers.signature !== opts.secret) {
				reply(res, 401, { error: 'bad signature' });
				return;
			}
			const body = Buffer.concat(chunks).toString();
			let note;
			try {
				note = JSON.parse(body);
			} catch (e) {
				note = null;
			}
			if (!note || typeof note.id !== 'string' || !note.data || typeof note.data.id !== 'string') {
				reply(res, 400, { error: 'not a notification' });
				return;
			}
			const account = req.url.slice(PREFIX.length);
			queue.add('postback', { account, body }, { ...jobOpts, jobId: note.id }).then(
				(job) => reply(res, 200, { received: true, job: job.id }),
				(err) => reply(res, 503, { error: String(err.message || err) }));
		});
	});
	server.keepAliveTimeout = 120000;
	server.listen(0, '127.0.0.1', () => {
		process.stdout.write('port ' + server.address().port + '\n');
	});
}

function work(opts) {
	const url = new URL(opts.sink);
	const agent = new http.Agent({ keepAlive: true, maxSockets: Number(opts.concurrency) });
	const post = (job) => new Promise((resolve, reject) => {
		const body = Buffer.from(job.data.body);
		const req = http.request({
			agent, host: url.hostname, port: url.port, path: url.pathname, method: 'POST',
			headers: { 'Content-Type': 'application/json', 'Content-Length': body.length, 'webhook-id': job.id },
		}, (res) => {
			res.resume();
			res.on('end', () => {
				if (res.statusCode >= 200 && res.statusCode < 300)
					resolve();
				else
					reject(new Error('postback answered ' + res.statusCode));
			});
		});
		req.on('error', reject);
		req.setTimeout(30000, () => req.destroy(new Error('postback timed out')));
		req.end(body);
	});
	const worker = new Worker(QUEUE, post, {
		connection: connection(opts.redis), concurrency: Number(opts.concurrency),
	});
	worker.on('error', (err) => process.stderr.write('worker: ' + err + '\n'));
	if (opts.listen !== '1')
		worker.waitUntilReady().then(() => process.stdout.write('worker ready\n'));
}

const opts = parseArgs(process.argv);
process.on('SIGTERM', () => process.exit(0));
if (opts.listen === '1')
	serve(opts);
if (opts.worker === '1')
	work(opts);
