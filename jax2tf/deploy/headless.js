// Headless Chromium, driven by puppeteer-core, opening the pages that
// jax2tf.deploy.headless asks for, one after another: what a Session starts.
//
//   node headless.js CHROMIUM [FLAG...]
//
// Each line on stdin is a request: {"url": URL, "screenshot": PNG or null,
// "timeout_ms": N, "actions": [STEP...]}; a step is {"stroke": [[x, y]...],
// "selector": CSS} (a mouse drag over the element, in its own pixels) or
// {"wait_for": JS expression}. The page opens in a new tab, which closes
// once it has set window.jax2tfDone. Each request gets one line on stdout:
// the reply prefix, then {"result", "error", "console"} (the page's
// window.jax2tfResult and window.jax2tfError, and what it logged), or
// {"failure": TEXT} where the tab could not be driven. Chromium closes when
// stdin does. FLAGs are Chromium switches, added to those below.
'use strict';

const readline = require('readline');
const puppeteer = require('puppeteer-core');

const ERROR_MARKER = '--- jax2tf browser: error ---';
const REPLY_PREFIX = 'jax2tf browser reply: ';

// SwiftShader gives headless Chromium a WebGL without a GPU.
const FLAGS = ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader',
               '--ignore-gpu-blocklist', '--disable-dev-shm-usage'];

async function drag(page, step) {
  const box = await (await page.$(step.selector)).boundingBox();
  const [first, ...rest] = step.stroke;
  await page.mouse.move(box.x + first[0], box.y + first[1]);
  await page.mouse.down();
  for (const [x, y] of rest) await page.mouse.move(box.x + x, box.y + y, {steps: 4});
  await page.mouse.up();
}

async function open(browser, request) {
  const logged = [];
  const page = await browser.newPage();
  try {
    await page.setViewport({width: 800, height: 600});
    page.on('console', message => logged.push(`${message.type()}: ${message.text()}`));
    page.on('pageerror', error => logged.push(`pageerror: ${error.message}`));
    await page.goto(request.url, {waitUntil: 'load', timeout: request.timeout_ms});
    for (const step of request.actions || []) {
      if (step.stroke) await drag(page, step);
      if (step.wait_for) await page.waitForFunction(step.wait_for, {timeout: request.timeout_ms});
    }
    await page.waitForFunction('window.jax2tfDone === true', {timeout: request.timeout_ms});
    const [result, error] = await page.evaluate(() => [window.jax2tfResult, window.jax2tfError]);
    if (request.screenshot) await page.screenshot({path: request.screenshot});
    return {result: result === undefined ? null : result, error: error || null, console: logged};
  } finally {
    await page.close();
  }
}

function reply(message) {
  return new Promise(resolve => process.stdout.write(REPLY_PREFIX + JSON.stringify(message) + '\n', resolve));
}

async function main(chromium, extra) {
  const browser = await puppeteer.launch({executablePath: chromium, headless: true,
                                         args: [...FLAGS, ...extra]});
  try {
    const lines = readline.createInterface({input: process.stdin, crlfDelay: Infinity});
    for await (const line of lines) {
      if (!line.trim()) continue;
      let answer;
      try {
        answer = await open(browser, JSON.parse(line));
      } catch (error) {
        answer = {failure: String(error && error.stack ? error.stack : error)};
      }
      await reply(answer);
    }
  } finally {
    await browser.close();
  }
}

main(process.argv[2], process.argv.slice(3)).catch(error => {
  process.stderr.write(`${ERROR_MARKER}\n${error && error.stack ? error.stack : error}\n`);
  process.exit(1);
});
