(function () {
  const passages = JSON.parse(document.getElementById('passages').textContent);
  const query = document.getElementById('query');
  const decision = document.getElementById('decision');
  const subject = document.getElementById('subject');
  const shown = document.getElementById('shown');
  const bios = Array.from(document.querySelectorAll('details.bio'));
  function keep(row, mode) {
    if (mode === 'S') return row.dataset.s === '1';
    if (mode === 'NS') return row.dataset.s === '0';
    if (mode === 'disagree') return row.dataset.d === '1';
    return true;
  }
  function apply() {
    const q = query.value.trim().toLowerCase();
    const mode = decision.value;
    let nBios = 0, nFacts = 0;
    for (const bio of bios) {
      let visible = 0;
      const topicHit = !q || bio.dataset.topic.toLowerCase().includes(q);
      if (subject.value && bio.dataset.subject !== subject.value) { bio.hidden = true; continue; }
      for (const row of bio.querySelectorAll('tr.fact')) {
        const show = keep(row, mode) && (topicHit || row.textContent.toLowerCase().includes(q));
        row.hidden = !show;
        visible += show ? 1 : 0;
      }
      for (const table of bio.querySelectorAll('table')) {
        const empty = table.querySelector('tr.fact:not([hidden])') === null;
        table.hidden = empty;
        if (table.previousElementSibling) table.previousElementSibling.hidden = empty;
      }
      bio.hidden = visible === 0 && !(mode === 'all' && topicHit);
      if (!bio.hidden) { nBios += 1; nFacts += visible; }
      if (q && visible && !bio.open) bio.open = true;
    }
    shown.textContent = nBios + ' bios, ' + nFacts + ' facts shown';
  }
  let timer = null;
  query.addEventListener('input', function () { clearTimeout(timer); timer = setTimeout(apply, 150); });
  decision.addEventListener('change', apply);
  subject.addEventListener('change', apply);
  const panel = document.getElementById('passage');
  document.addEventListener('click', function (event) {
    const button = event.target.closest('button.ev');
    if (button) {
      const p = passages[button.dataset.p];
      panel.querySelector('h3').textContent = p ? p[0] + ' (passage ' + button.dataset.p + ')' : 'passage ' + button.dataset.p;
      panel.querySelector('div').textContent = p ? p[1] : '(text not in this report: give --index)';
      panel.hidden = false;
    } else if (event.target.closest('#close-passage')) {
      panel.hidden = true;
    }
  });
  apply();
})();
