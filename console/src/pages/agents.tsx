import { api, forbidden } from '../api';
import { ErrorBox, href, Loading, Page, useLoad } from '../ui';
import { CreateAgent } from './create-agent';

interface AgentRow {
  key: string;
  name: string;
  description?: string;
  model?: { name: string };
  enabled?: boolean;
}

export function AgentsPage() {
  const list = useLoad(() => api<{ agents: AgentRow[] }>('GET', '/v2/agents?limit=100'), []);
  // A credential without agent rights gets one message, not an empty list, a 403 and a form it may not use.
  if (forbidden(list.error))
    return (
      <Page title="Agents">
        <p class="notice" role="status">
          This credential may not use agents (the service answered 403 to the list of agents). Sign in with an API key or app client that holds an agent role.
        </p>
      </Page>
    );
  return (
    <Page title="Agents">
      <CreateAgent onCreated={list.reload} />
      <h2>All agents</h2>
      <ErrorBox error={list.error} />
      {list.loading && !list.data ? (
        <Loading what="agents" />
      ) : list.data?.agents.length ? (
        <table>
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Name</th>
              <th scope="col">Model</th>
              <th scope="col">Enabled</th>
              <th scope="col">Description</th>
            </tr>
          </thead>
          <tbody>
            {list.data.agents.map((a) => (
              <tr key={a.key}>
                <td>
                  <a href={href('agents', a.key)}>{a.key}</a>
                </td>
                <td>{a.name}</td>
                <td>{a.model?.name}</td>
                <td>{a.enabled === false ? 'no' : 'yes'}</td>
                <td>{a.description}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        list.data && <p>No agents yet.</p>
      )}
    </Page>
  );
}
