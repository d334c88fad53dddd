import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { clearCredential, Credential, loadCredential } from './api';
import { AccessPage } from './pages/access';
import { AgentPage } from './pages/agent';
import { AgentsPage } from './pages/agents';
import { AliasesPage } from './pages/aliases';
import { ChatPage } from './pages/chat';
import { CorporaPage } from './pages/corpora';
import { CorpusPage } from './pages/corpus';
import { DocumentPage } from './pages/document';
import { EvaluationPage, EvaluationsPage } from './pages/evaluations';
import { EventsPage } from './pages/events';
import { HistoryPage } from './pages/history';
import { ModelsPage } from './pages/models';
import { PipelinesPage } from './pages/pipelines';
import { QueryPage } from './pages/query';
import { ReplayPage } from './pages/replay';
import { SignIn } from './pages/sign-in';
import { ToolsPage } from './pages/tools';
import { TracesPage } from './pages/traces';
import './style.css';

const NAV: [string, string][] = [
  ['corpora', 'Corpora'],
  ['query', 'Query'],
  ['agents', 'Agents'],
  ['aliases', 'Aliases'],
  ['pipelines', 'Pipelines'],
  ['tools', 'Tools'],
  ['events', 'Event log'],
  ['models', 'Models'],
  ['access', 'Access'],
];

function route(): string[] {
  return location.hash.replace(/^#\/?/, '').split('?')[0].split('/').filter(Boolean).map(decodeURIComponent);
}

/** Routing is in the hash, so the service serves one page and a reload keeps the place. */
function Routed({ path }: { path: string[] }) {
  const [section, a, b, c, d, e] = path;
  switch (section) {
    case 'corpora':
      if (a && b === 'documents' && c) return <DocumentPage corpus={a} id={c} />;
      return a ? <CorpusPage corpus={a} /> : <CorporaPage />;
    case 'query':
      return <QueryPage />;
    case 'agents':
      if (a && b === 'sessions' && c && d === 'history') return <HistoryPage agent={a} session={c} />;
      if (a && b === 'sessions' && c && d === 'traces') return <TracesPage agent={a} session={c} trace={e} />;
      if (a && b === 'sessions' && c && d === 'replay') return <ReplayPage agent={a} session={c} />;
      if (a && b === 'evaluations') return c ? <EvaluationPage agent={a} id={c} /> : <EvaluationsPage agent={a} />;
      if (a && b === 'sessions' && c) return <ChatPage agent={a} session={c} />;
      return a ? <AgentPage agent={a} /> : <AgentsPage />;
    case 'aliases':
      return <AliasesPage alias={a} />;
    case 'pipelines':
      return <PipelinesPage pipeline={a} run={b === 'runs' ? c : undefined} />;
    case 'tools':
      return <ToolsPage />;
    case 'events':
      return <EventsPage />;
    case 'models':
      return <ModelsPage />;
    case 'access':
      return <AccessPage />;
    default:
      return <CorporaPage />;
  }
}

function App() {
  const [credential, setCredential] = useState<Credential | undefined>(loadCredential);
  const [path, setPath] = useState(route);
  const [notice, setNotice] = useState<string>();
  const signedIn = useRef(credential !== undefined);
  signedIn.current = credential !== undefined;
  useEffect(() => {
    const onHash = () => setPath(route());
    const onUnauthorized = (e: Event) => {
      // Only a session that was signed in is signed out: a wrong key at sign-in is the sign-in form's one message.
      if (!signedIn.current) return;
      clearCredential();
      setCredential(undefined);
      setNotice(`Signed out: ${(e as CustomEvent<string>).detail}`);
    };
    addEventListener('hashchange', onHash);
    addEventListener('console:unauthorized', onUnauthorized);
    return () => {
      removeEventListener('hashchange', onHash);
      removeEventListener('console:unauthorized', onUnauthorized);
    };
  }, []);
  if (!credential) return <SignIn notice={notice} onSignedIn={setCredential} />;
  return (
    <div class="shell">
      {/* The hash is the route: the skip link moves focus itself rather than navigating to #main. */}
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to content
      </a>
      <nav aria-label="Sections">
        <p class="brand">Console</p>
        <ul>
          {NAV.map(([key, label]) => (
            <li key={key}>
              <a href={`#/${key}`} aria-current={path[0] === key || (!path[0] && key === 'corpora') ? 'page' : undefined}>
                {label}
              </a>
            </li>
          ))}
        </ul>
        <p class="who">Signed in with {credential.label}</p>
        <button
          type="button"
          onClick={() => {
            clearCredential();
            setCredential(undefined);
          }}
        >
          Sign out
        </button>
      </nav>
      <main id="main" tabIndex={-1}>
        <Routed path={path} />
      </main>
    </div>
  );
}

render(<App />, document.getElementById('app')!);
