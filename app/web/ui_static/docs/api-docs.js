// /docs and /redoc (app/web/api_docs.py): fetch the API description with the API key this tab keeps (the web UI
// keeps it under the same name), ask for a key when the service refuses, then render it. "Try it out" calls
// send that key too, unless the Authorize button set one.

const KEY_STORAGE = 'lightrag.apiKey'; // app/web/ui_static/js/api.js

function storedKey() {
  return sessionStorage.getItem(KEY_STORAGE);
}

function askForKey(reason) {
  const form = document.getElementById('key-form');
  const input = document.getElementById('key-input');
  document.getElementById('key-reason').textContent = reason;
  form.hidden = false;
  input.value = '';
  input.focus();
  return new Promise((resolve) => {
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      form.hidden = true;
      resolve(input.value.trim());
    }, { once: true });
  });
}

async function loadDescription(url) {
  for (;;) {
    const key = storedKey();
    const response = await fetch(url, { headers: key ? { Authorization: `Bearer ${key}` } : {} });
    if (response.status !== 401) {
      if (!response.ok) throw new Error(`${url} answered ${response.status}`);
      return response.json();
    }
    const reason = key ? 'That API key was refused: enter another.'
      : 'This service needs an API key (one of API_KEYS) to show its API.';
    const entered = await askForKey(reason);
    if (entered) sessionStorage.setItem(KEY_STORAGE, entered);
  }
}

function withStoredKey(request) {
  const key = storedKey();
  const named = Object.keys(request.headers).some((name) => name.toLowerCase() === 'authorization');
  if (key && !named) request.headers.Authorization = `Bearer ${key}`;
  return request;
}

function render(viewer, spec) {
  if (viewer === 'redoc') {
    Redoc.init(spec, {}, document.getElementById('redoc'));
    return;
  }
  SwaggerUIBundle({
    spec,
    dom_id: '#swagger-ui',
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
    layout: 'BaseLayout',
    deepLinking: true,
    requestInterceptor: withStoredKey,
  });
}

const { viewer, spec: specUrl } = document.body.dataset;
loadDescription(specUrl).then((spec) => render(viewer, spec)).catch((error) => {
  const reason = document.getElementById('key-reason');
  reason.textContent = `Could not load the API description: ${error.message}`;
  document.getElementById('key-form').hidden = false;
  document.getElementById('key-input').hidden = true;
  document.querySelector('#key-form button').hidden = true;
});
