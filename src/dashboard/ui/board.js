// The deal pipeline as a board: a column per stage, deals as cards. A card moves by drag-and-drop
// or, from the keyboard, by its "Move to" select; both PATCH the deal's stage_id. A stage whose
// checklist needs evidence the deal lacks answers 409 with `missing`: the board says what is missing
// in words and offers to record it and move again, or to move without it (`force: true`, recorded on
// the stage change). The columns share the width; with more stages than fit, the board scrolls
// sideways and says so.
import { api, ApiError, query } from './api.js';
import { ErrorMessage, formatMoney, Heading } from './common.js';
import { Gate } from './gate.js';
import { html, useEffect, useRef, useState } from './html.js';

const DEALS_PER_STAGE = 50;

/** How many stage columns of the board are not wholly in view (0 when they all fit). */
function useOutOfView(board, deps) {
  const [count, setCount] = useState(0);
  useEffect(() => {
    const element = board.current;
    if (!element) return undefined;
    const measure = () => {
      const box = element.getBoundingClientRect();
      setCount([...element.children].filter((column) => {
        const edge = column.getBoundingClientRect();
        return edge.right > box.right + 1 || edge.left < box.left - 1;
      }).length);
    };
    measure();
    addEventListener('resize', measure);
    element.addEventListener('scroll', measure);
    return () => {
      removeEventListener('resize', measure);
      element.removeEventListener('scroll', measure);
    };
  }, deps);
  return count;
}

export function Board() {
  const [pipelines, setPipelines] = useState(null);
  const [pipelineId, setPipelineId] = useState('');
  const [columns, setColumns] = useState({});
  const [error, setError] = useState(null);
  const [blocked, setBlocked] = useState(null);
  const [notice, setNotice] = useState('');
  const [dropTarget, setDropTarget] = useState(null);

  useEffect(() => {
    api(`/v1/deals/pipelines${query({ limit: 200 })}`).then((body) => {
      setPipelines(body.data);
      setPipelineId((body.data.find((p) => p.is_default) ?? body.data[0])?.id ?? '');
    }, setError);
  }, []);
  const pipeline = pipelines?.find((p) => p.id === pipelineId);
  const board = useRef(null);
  const overflow = useOutOfView(board, [pipeline, columns]);

  const reload = async () => {
    if (!pipeline) return;
    try {
      const pages = await Promise.all(pipeline.stages.map((stage) =>
        api(`/v1/deals${query({ pipeline_id: pipeline.id, stage_id: stage.id, limit: DEALS_PER_STAGE })}`)));
      setColumns(Object.fromEntries(pipeline.stages.map((stage, i) => [stage.id, pages[i]])));
    } catch (e) {
      setError(e);
    }
  };
  useEffect(() => { reload(); }, [pipelineId, pipelines]);

  const stageName = (id) => pipeline?.stages.find((s) => s.id === id)?.name ?? id;
  const move = async (deal, stageId, force = false) => {
    if (deal.stage_id === stageId && !force) return;
    setError(null);
    setBlocked(null);
    try {
      await api(`/v1/deals/${deal.id}`, { method: 'PATCH', body: force ? { stage_id: stageId, force: true } : { stage_id: stageId } });
      setNotice(`Moved ${deal.name} to ${stageName(stageId)}${force ? ' without the missing evidence' : ''}.`);
    } catch (e) {
      if (e instanceof ApiError && e.status === 409 && Array.isArray(e.body.missing)) setBlocked({ deal, stageId, missing: e.body.missing });
      else setError(e);
    }
    await reload();
  };

  const drop = (event, stageId) => {
    event.preventDefault();
    setDropTarget(null);
    const id = event.dataTransfer.getData('text/plain');
    const deal = Object.values(columns).flatMap((page) => page.data).find((d) => d.id === id);
    if (deal) move(deal, stageId);
  };

  if (!pipelines) return html`<${Heading}>Pipeline<//><${ErrorMessage} error=${error} />`;
  return html`
    <${Heading}>Pipeline<//>
    <div class="toolbar">
      <label for="pipeline">Pipeline</label>
      <select id="pipeline" value=${pipelineId} onChange=${(e) => setPipelineId(e.target.value)}>
        ${pipelines.map((p) => html`<option value=${p.id}>${p.name}</option>`)}
      </select>
      ${pipeline && html`<${NewDeal} pipeline=${pipeline} onCreated=${(deal) => { setNotice(`Created ${deal.name}.`); reload(); }} />`}
    </div>
    <p role="status">${notice}</p>
    <${ErrorMessage} error=${error} />
    ${blocked && html`<${Gate} key=${`${blocked.deal.id} ${blocked.stageId}`} deal=${blocked.deal} stage=${stageName(blocked.stageId)} missing=${blocked.missing}
      onRecorded=${() => move(blocked.deal, blocked.stageId)} onForce=${() => move(blocked.deal, blocked.stageId, true)} onDismiss=${() => setBlocked(null)} />`}
    ${overflow > 0 && html`<p class="hint" id="board-scroll">${overflow} of ${pipeline.stages.length} stages are out of view: scroll the board sideways (or Shift + mouse wheel) to see them.</p>`}
    <div class="board" ref=${board} tabindex=${overflow ? '0' : undefined} aria-describedby=${overflow ? 'board-scroll' : undefined}>
      ${pipeline?.stages.map((stage) => {
        const page = columns[stage.id];
        return html`
          <section class=${`stage${dropTarget === stage.id ? ' drop-target' : ''}`} aria-label=${`Stage ${stage.name}`} data-stage=${stage.name}
            onDragOver=${(e) => { e.preventDefault(); setDropTarget(stage.id); }}
            onDragLeave=${() => setDropTarget(null)}
            onDrop=${(e) => drop(e, stage.id)}>
            <h2>${stage.name} <span class="count">${page ? page.pagination.total : ''}</span></h2>
            <ul>
              ${page?.data.map((deal) => html`
                <li class="card" draggable="true" data-deal=${deal.name} onDragStart=${(e) => { e.dataTransfer.setData('text/plain', deal.id); e.dataTransfer.effectAllowed = 'move'; }}>
                  <a href=${`#/deals/${deal.id}`}>${deal.name}</a>
                  <span>${formatMoney(deal.amount, deal.currency)}</span>
                  <label class="move">
                    <span class="visually-hidden">Move ${deal.name} to</span>
                    <select value=${stage.id} onChange=${(e) => move(deal, e.target.value)}>
                      ${pipeline.stages.map((s) => html`<option value=${s.id}>${s.id === stage.id ? `In ${s.name}` : `Move to ${s.name}`}</option>`)}
                    </select>
                  </label>
                </li>`)}
            </ul>
            ${page?.pagination.has_next && html`<p class="more">and ${page.pagination.total - page.data.length} more</p>`}
          </section>`;
      })}
    </div>
  `;
}

function NewDeal({ pipeline, onCreated }) {
  const [name, setName] = useState('');
  const [amount, setAmount] = useState('');
  const [error, setError] = useState(null);
  const submit = async (event) => {
    event.preventDefault();
    setError(null);
    try {
      const body = { name: name.trim(), pipeline_id: pipeline.id };
      if (amount !== '') body.amount = Math.round(Number(amount) * 100);
      const created = await api('/v1/deals', { method: 'POST', body });
      setName('');
      setAmount('');
      onCreated(created.data);
    } catch (e) {
      setError(e);
    }
  };
  return html`
    <form class="inline-form" onSubmit=${submit} aria-label="New deal">
      <label for="deal-name">Deal name</label>
      <input id="deal-name" required maxlength="500" value=${name} onInput=${(e) => setName(e.target.value)} placeholder="Name" />
      <label for="deal-amount">Amount</label>
      <input id="deal-amount" type="number" min="0" step="0.01" value=${amount} onInput=${(e) => setAmount(e.target.value)} placeholder="0.00" />
      <button type="submit">Create deal</button>
      <${ErrorMessage} error=${error} />
    </form>
  `;
}
