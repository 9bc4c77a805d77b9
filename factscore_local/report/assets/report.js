(function () {
  const passages = JSON.parse(document.getElementById('passages').textContent);
  const query = document.getElementById('query');
  const decision = document.getElementById('decision');
  const subject = document.getElementById('subject');  // absent with one subject LM
  const shown = document.getElementById('shown');
  const bios = Array.from(document.querySelectorAll('details.bio'));
  const panel = document.getElementById('passage');
  function keep(row, mode) {
    if (mode === 'S') return row.dataset.s === '1';
    if (mode === 'NS') return row.dataset.s === '0';
    if (mode === 'disagree') return row.dataset.d === '1';
    return true;
  }
  function apply() {
    closePassage();
    const q = query.value.trim().toLowerCase();
    const mode = decision.value;
    const only = subject ? subject.value : '';
    let nBios = 0, nFacts = 0;
    for (const bio of bios) {
      let visible = 0;
      const topicHit = !q || bio.dataset.topic.toLowerCase().includes(q);
      if (only && bio.dataset.subject !== only) { bio.hidden = true; continue; }
      for (const row of bio.querySelectorAll('tr.fact')) {
        const show = keep(row, mode) && (topicHit || row.textContent.toLowerCase().includes(q));
        row.hidden = !show;
        visible += show ? 1 : 0;
      }
      for (const table of bio.querySelectorAll('table.facts')) {
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
  // The passage's text, with the spans "start,end,kind;..." wrapped in <mark class=kind>
  // (the sentence a veto quotes and its conflicting value). Text nodes only: never markup.
  function render(target, text, marks) {
    target.textContent = '';
    let at = 0;
    const spans = (marks || '').split(';').filter(Boolean).map(function (s) {
      const p = s.split(','); return [Number(p[0]), Number(p[1]), p[2]];
    });
    for (const [start, end, kind] of spans) {
      if (start < at) continue;
      target.appendChild(document.createTextNode(text.slice(at, start)));
      const mark = document.createElement('mark');
      mark.className = kind;
      mark.textContent = text.slice(start, end);
      target.appendChild(mark);
      at = end;
    }
    target.appendChild(document.createTextNode(text.slice(at)));
  }
  // The viewer opens in a row of its own under the fact, across the table: it pushes the
  // rows below down and never covers the evidence column.
  function openPassage(button) {
    const row = button.closest('tr');
    const holder = document.createElement('tr');
    holder.className = 'viewer';
    const cell = document.createElement('td');
    cell.colSpan = row.cells.length;
    holder.appendChild(cell);
    row.after(holder);
    cell.appendChild(panel);
    const p = passages[button.dataset.p];
    panel.querySelector('h3').textContent = (p ? p[0] : 'passage') + ' #' + button.dataset.p;
    const body = panel.querySelector('div');
    if (p) render(body, p[1], button.dataset.marks); else body.textContent = '(text not in this report: give --index)';
    panel.dataset.p = button.dataset.p;
    panel.hidden = false;
    const value = body.querySelector('mark.value');
    if (value) value.scrollIntoView({block: 'nearest'});
  }
  function closePassage() {
    const holder = panel.closest('tr.viewer');
    panel.hidden = true;
    document.body.appendChild(panel);
    if (holder) holder.remove();
  }
  let timer = null;
  query.addEventListener('input', function () { clearTimeout(timer); timer = setTimeout(apply, 150); });
  decision.addEventListener('change', apply);
  if (subject) subject.addEventListener('change', apply);
  document.addEventListener('click', function (event) {
    const button = event.target.closest('button.ev');
    if (button) {
      const same = !panel.hidden && panel.closest('tr.viewer') &&
        panel.closest('tr.viewer').previousElementSibling === button.closest('tr') &&
        panel.dataset.p === button.dataset.p;
      closePassage();
      if (!same) openPassage(button);
    } else if (event.target.closest('#close-passage')) {
      closePassage();
    }
  });
  apply();
})();
