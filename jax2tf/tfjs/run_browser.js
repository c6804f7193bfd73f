// Opens a page in headless Chromium (puppeteer-core) and waits for it to set
// window.jax2tfDone: what jax2tf.tfjs.browser starts.
//
//   node run_browser.js REQUEST.json
//
// REQUEST.json: {"chromium": PATH, "url": URL, "out": RESULT.json,
//   "screenshot": PNG or null, "timeout_ms": N, "actions": [STEP...]}; a step
// is {"stroke": [[x, y]...], "selector": CSS} (a mouse drag over the element,
// in its own pixels) or {"wait_for": JS expression}. Writes {"result",
// "error", "console"} to "out": the page's window.jax2tfResult and
// window.jax2tfError, and what it logged.
'use strict';

const fs = require('fs');
const puppeteer = require('puppeteer-core');

const ERROR_MARKER = '--- jax2tf.tfjs: error ---';

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

async function main(requestPath) {
  const request = JSON.parse(fs.readFileSync(requestPath, 'utf8'));
  const browser = await puppeteer.launch({
    executablePath: request.chromium, headless: true, args: FLAGS,
  });
  const logged = [];
  try {
    const page = await browser.newPage();
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
    fs.writeFileSync(request.out, JSON.stringify({result, error: error || null, console: logged}));
  } finally {
    await browser.close();
  }
}

main(process.argv[2]).catch(error => {
  process.stderr.write(`${ERROR_MARKER}\n${error && error.stack ? error.stack : error}\n`);
  process.exit(1);
});
