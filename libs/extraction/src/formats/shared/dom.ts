import type { AnyNode, Element } from 'domhandler';
import { DomUtils, parseDocument } from 'htmlparser2';

export type { AnyNode, Element };

/** Parses XML (ODF, OPF, NCX) keeping element names as written, prefixes included. */
export const parseXml = (xml: string) => parseDocument(xml, { xmlMode: true });

/** An element name without its namespace prefix: OPF and NCX files use prefixes inconsistently. */
export const localName = (el: Element): string => el.name.slice(el.name.indexOf(':') + 1);

export const findFirst = (nodes: AnyNode | AnyNode[], test: (el: Element) => boolean): Element | undefined =>
  DomUtils.findOne(test, Array.isArray(nodes) ? nodes : [nodes]) ?? undefined;

export const findEvery = (nodes: AnyNode | AnyNode[], test: (el: Element) => boolean): Element[] => DomUtils.findAll(test, Array.isArray(nodes) ? nodes : [nodes]);

export const attribute = (el: Element, name: string): string | undefined => el.attribs[name];

export const textOf = (node: AnyNode | AnyNode[] | undefined): string => (node === undefined ? '' : DomUtils.textContent(node).trim());

export const { isTag, isText } = DomUtils;
